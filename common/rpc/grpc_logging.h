// gRPC's own log messages (a TLS handshake that failed, a bad peer) in the same stream
// and format as Drip's, under the "grpc" logger, instead of gRPC's own stderr format.
#pragma once

namespace drip {

// For the daemons, after InitLogging (common/daemon/logging.h). gRPC reports a peer's
// failure at its ERROR level; the process itself is fine, so those are warnings here.
void RouteGrpcLogs();

// For command-line tools whose errors reach the user as statuses: gRPC's own log lines
// would only repeat them.
void SilenceGrpcLogs();

}  // namespace drip
