#include "common/rpc/grpc_logging.h"

#include <grpc/support/log.h>

#include "common/daemon/logging.h"

namespace drip {
namespace {

// gRPC's own messages (a TLS handshake that failed, a bad peer) in the same stream and
// format as ours, under the "grpc" logger, instead of gRPC's own stderr format.
void GrpcLogToSpdlog(gpr_log_func_args* args) {
  spdlog::level::level_enum level = spdlog::level::debug;
  switch (args->severity) {
    case GPR_LOG_SEVERITY_ERROR:
      // gRPC reports a peer's failure (a refused handshake) at ERROR: the collector's own
      // state is fine, so it is a warning in Drip's terms (docs/logging.md).
      level = spdlog::level::warn;
      break;
    case GPR_LOG_SEVERITY_INFO:
      level = spdlog::level::info;
      break;
    case GPR_LOG_SEVERITY_DEBUG:
      break;
  }
  Logger("grpc")->log(level, "{}", args->message);
}

}  // namespace

void RouteGrpcLogs() { gpr_set_log_function(GrpcLogToSpdlog); }

void SilenceGrpcLogs() {
  gpr_set_log_function([](gpr_log_func_args*) {});
}

}  // namespace drip
