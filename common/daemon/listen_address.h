// ListenAddress: the "host:port" strings that the daemons' listen_address options
// hold, parsed once so that a typo is reported when the config is
// read rather than as a bind failure later, and so that the ready file can name an
// address a local client can dial.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace drip {

struct ListenAddress {
  std::string host;  // "0.0.0.0", "127.0.0.1", "::" (without brackets), "collector.internal"
  int port = 0;      // 0: the kernel picks one

  // Accepts "host:port" and "[v6-host]:port" with a port in [0, 65535]. The error message
  // says what is wrong with `text` but not where it came from; callers prefix the key or flag.
  static absl::StatusOr<ListenAddress> Parse(std::string_view text);

  // The address a client on this machine should dial once the server is bound to
  // `bound_port`: wildcard hosts become 127.0.0.1, anything else is kept.
  std::string LocalDialAddress(int bound_port) const;
};

}  // namespace drip
