#include "collector/ingest/command_router.h"

#include <utility>
#include <vector>

#include "fmt/format.h"

namespace drip::collector {

absl::StatusOr<uint64_t> CommandRouter::Await(const std::string& host,
                                              const std::string& command_id, int64_t deadline_ms,
                                              Done done) {
  std::lock_guard<std::mutex> lock(mu_);
  if (waiting_.contains(command_id)) {
    return absl::AlreadyExistsError(
        fmt::format("command {} is already waiting for its agent", command_id));
  }
  const uint64_t ticket = next_ticket_++;
  waiting_[command_id] = Waiting{host, deadline_ms, ticket, std::move(done)};
  return ticket;
}

absl::StatusOr<uint64_t> CommandRouter::Send(const std::string& host,
                                             const drip::v1::Command& command, int64_t deadline_ms,
                                             Done done) {
  // Waiting before it is sent: the agent may answer before SendCommand returns.
  absl::StatusOr<uint64_t> ticket = Await(host, command.id(), deadline_ms, std::move(done));
  if (!ticket.ok()) return ticket;
  if (hosts_->SendCommand(host, command)) return ticket;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = waiting_.find(command.id());
  // An Expire in between has already given `done` its answer: the command is over.
  if (it == waiting_.end() || it->second.ticket != *ticket) return ticket;
  waiting_.erase(it);
  return absl::FailedPreconditionError(fmt::format("host {} does not stream here", host));
}

bool CommandRouter::Deliver(const std::string& host, const drip::v1::CommandResult& result) {
  Done done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = waiting_.find(result.command_id());
    if (it == waiting_.end() || it->second.host != host) return false;
    done = std::move(it->second.done);
    waiting_.erase(it);
  }
  done(result);
  return true;
}

bool CommandRouter::Cancel(const std::string& command_id, uint64_t ticket) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = waiting_.find(command_id);
  if (it == waiting_.end() || it->second.ticket != ticket) return false;
  waiting_.erase(it);
  return true;
}

void CommandRouter::Expire(int64_t now_ms) {
  std::vector<std::pair<std::string, Done>> expired;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if (now_ms < it->second.deadline_ms) {
        ++it;
        continue;
      }
      expired.emplace_back(it->second.host, std::move(it->second.done));
      it = waiting_.erase(it);
    }
  }
  for (auto& [host, done] : expired) {
    done(absl::DeadlineExceededError(fmt::format("the agent of {} did not answer in time", host)));
  }
}

size_t CommandRouter::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_.size();
}

}  // namespace drip::collector
