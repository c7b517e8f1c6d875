// The exit codes every Drip binary shares (drip-agent, drip-collector, dripctl), so that
// scripts and systemd read them the same way. dripctl adds codes of its own above these
// (cli/exit_codes.h, docs/dripctl.md).
#pragma once

namespace drip {

inline constexpr int kExitOk = 0;
// The program ran but failed: the store, an address or the collector was unusable.
inline constexpr int kExitFailure = 1;
// Bad flags, config or input file: the one-line message says which and where.
inline constexpr int kExitUsage = 2;

}  // namespace drip
