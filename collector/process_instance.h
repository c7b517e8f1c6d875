// The collector's reading of an instance name. Agents name a process instance
// "pid@start" (start time since boot), so that a reused pid is a different instance;
// commands carry both and the agent refuses when the pid is another process by now.
#pragma once

#include <string>

namespace drip::collector {

// "pid@start" -> pid; 0 when the instance does not name a process (e.g. "cg@42").
inline int PidOfInstance(const std::string& instance) {
  const std::string digits = instance.substr(0, instance.find('@'));
  if (digits.empty() || digits.size() > 9) return 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return 0;
  }
  return std::stoi(digits);
}

}  // namespace drip::collector
