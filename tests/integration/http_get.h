// HttpGet: a minimal HTTP/1.0 GET over loopback for tests that read a daemon's
// Prometheus /metrics, without depending on curl being installed.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace drip::testing {

// GET http://`address``path` ("127.0.0.1:9102", "/metrics"); the body of a 200 response.
absl::StatusOr<std::string> HttpGet(const std::string& address, const std::string& path);

// The value of the first sample line of `metrics` (Prometheus text format) whose name and
// labels start with `series_prefix` (e.g. "drip_agent_entities{kind=\"process\"}").
absl::StatusOr<double> MetricValue(const std::string& metrics, const std::string& series_prefix);

}  // namespace drip::testing
