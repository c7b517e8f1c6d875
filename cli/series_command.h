// `dripctl series --host H --component C [--since 1h]`: the raw samples behind a leak
// suspect, one row per sample, instances (restarts) told apart.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "cli/query_client.h"
#include "drip/v1/query.pb.h"

namespace drip::cli {

struct SeriesCommandOptions {
  std::string host;
  std::string component;
  std::chrono::milliseconds since{0};  // 0: everything retained
  bool json = false;
};

absl::Status RunSeriesCommand(QueryClient& client, const SeriesCommandOptions& options,
                              std::ostream& out);

void RenderSeries(const drip::v1::GetSeriesResponse& response, bool json, std::ostream& out);

}  // namespace drip::cli
