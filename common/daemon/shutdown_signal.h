// Clean shutdown for daemons: SIGTERM and SIGINT are blocked in every thread and
// received by one waiter, so a gRPC server or sampling loop stops at a safe point
// instead of dying inside a RocksDB write.
#pragma once

#include <csignal>

namespace drip {

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread and the threads it creates
// later. Call first thing in main(), before any thread starts.
void BlockShutdownSignals();

// Waits until SIGTERM or SIGINT arrives (SIGHUP is ignored for now) and returns it.
int WaitForShutdownSignal();

}  // namespace drip
