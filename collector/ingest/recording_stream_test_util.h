// RecordingStream: an agent stream for unit tests of what the collector sends down
// (snapshot and mitigation commands); it keeps every command. The real stream is
// exercised by the end-to-end tests.
#pragma once

#include <vector>

#include "collector/ingest/connected_hosts.h"

namespace drip::collector {

class RecordingStream : public ConnectedHosts::Stream {
 public:
  void Supersede() override {}
  bool IsOpen() override { return true; }
  bool SendCommand(const drip::v1::Command& command) override {
    sent.push_back(command);
    return true;
  }
  void MoveTo(const std::string& /*owner_name*/, const std::string& /*owner_address*/) override {}
  std::vector<drip::v1::Command> sent;
};

}  // namespace drip::collector
