// Process instances, "PID@START": how Drip names one run of a process everywhere — the
// samplers name instances so, commands carry them, and the agent checks them before it
// acts. START is the process's start time in Unix seconds (boot time plus the start
// ticks of /proc/PID/stat), so a recycled pid is a different instance. Other instance
// names exist ("cg@42" for a unit's cgroup); they name no process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace drip {

struct ProcessInstance {
  int pid = 0;
  int64_t start_s = 0;  // Unix seconds
};

// "1234@1700000000".
std::string FormatProcessInstance(int pid, int64_t start_s);

// The instance `text` names, when it is exactly PID@START with a positive pid and both
// parts decimal; nullopt for anything else.
std::optional<ProcessInstance> ParseProcessInstance(std::string_view text);

// The pid of a PID@START instance; 0 when `text` names no process.
int PidOfInstance(std::string_view text);

}  // namespace drip
