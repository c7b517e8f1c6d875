// ConnectedHosts: which hosts have an open agent stream right now, and which stream.
// One stream per host: when a host reconnects while its old stream still looks open
// (a half-dead TCP connection the keepalive has not caught yet), the new stream wins
// and the old one is told to finish, so that two streams never interleave one host's
// batches. The query API reads `connected` from here; commands for a host will be
// routed through here.
//
// Thread-safe. Lifetime rule: the registry calls a Stream only while holding its lock,
// and a stream unregisters itself (taking the same lock) before it is destroyed, so a
// registered Stream is always alive when called. Hence a Stream's methods must not call
// back into the registry.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "drip/v1/agent.pb.h"
#include "prometheus/gauge.h"

namespace drip::collector {

class ConnectedHosts {
 public:
  // What the registry needs from an agent stream (AgentStreamReactor implements it).
  class Stream {
   public:
    virtual ~Stream() = default;
    // A newer stream from the same host registered: finish this one (ABORTED).
    virtual void Supersede() = 0;
    // False once the stream has been finished, even if not yet unregistered.
    virtual bool IsOpen() = 0;
    // Queues `command` for the agent; false if the stream can no longer send.
    virtual bool SendCommand(const drip::v1::Command& command) = 0;
    // Another collector now owns the host: acknowledge what is stored, then finish
    // (FAILED_PRECONDITION) naming `owner_address` for the agent to go to.
    virtual void MoveTo(const std::string& owner_name, const std::string& owner_address) = 0;
  };

  // `connected_gauge` (may be null) tracks the number of registered hosts.
  explicit ConnectedHosts(prometheus::Gauge* connected_gauge = nullptr);

  // Makes `stream` the host's stream; a different stream registered for the host before
  // is superseded.
  void Register(const std::string& host, Stream* stream);

  // Removes the host's entry if it is still `stream` (a superseded stream must not
  // remove its successor).
  void Unregister(const std::string& host, Stream* stream);

  // True when the host has a registered stream that has not finished.
  bool IsConnected(const std::string& host) const;

  // Queues `command` on the host's stream; false when the host is not connected.
  bool SendCommand(const std::string& host, const drip::v1::Command& command);

  // Sends the host's stream on to another collector (Stream::MoveTo); false when the
  // host is not connected.
  bool MoveTo(const std::string& host, const std::string& owner_name,
              const std::string& owner_address);

  // The hosts with a registered stream, in name order.
  std::vector<std::string> Hosts() const;

  size_t size() const;

 private:
  void UpdateGaugeLocked();

  mutable std::mutex mu_;
  std::map<std::string, Stream*> streams_;
  prometheus::Gauge* gauge_;
};

}  // namespace drip::collector
