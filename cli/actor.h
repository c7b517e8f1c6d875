// Who is asking: the actor dripctl names in UpdateLeakState and Mitigate requests, so
// the audit log says which person changed a report or restarted a unit. The collector
// adds the peer address itself; this is the person's own claim.
#pragma once

#include <string>

namespace drip::cli {

// "$USER@hostname"; when USER is unset (cron, a bare container) the name of the
// effective uid from the password database, else "uid<N>"; "unknown-host" when the
// host name cannot be read.
std::string CurrentActor();

}  // namespace drip::cli
