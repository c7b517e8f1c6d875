// libbpf's own messages — why the kernel refused a program (verifier log, missing BTF),
// a map that could not be created — routed into the "bpf" logger instead of raw stderr,
// and the one spelling of libbpf's negative error codes. Every BPF loader of the agent
// (BpfTaskMonitor, HeapProbeSession) calls RouteLibbpfLogs() before it touches libbpf,
// so the daemon and `drip-agent snapshot` alike log libbpf through spdlog.
#pragma once

#include <string>

namespace drip::agent {

// Idempotent and thread-safe. libbpf's warnings and info go to "bpf" at debug (a
// refusal is reported by the loader as an error status that says what to do; the
// verifier's reasons are for `log.level: debug`); libbpf's debug chatter is dropped.
void RouteLibbpfLogs();

// "Operation not permitted" for -EPERM or EPERM: libbpf returns negative codes, errno
// holds positive ones.
std::string LibbpfErrorText(int err);

}  // namespace drip::agent
