// Fuzzes dripctl's own config file (cli/dripctl_config.h) through LoadDripctlConfig, the
// path dripctl takes: the bytes are a file (a memfd) so that the file reading is fuzzed
// too. DRIP_COLLECTOR is cleared so that the file alone decides.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "cli/dripctl_config.h"
#include "tests/fuzz/config_outcome.h"
#include "tests/fuzz/mem_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ::unsetenv("DRIP_COLLECTOR");
  const drip::fuzz::MemFile file(drip::fuzz::AsText(data, size));
  absl::StatusOr<drip::cli::DripctlConfig> config = drip::cli::LoadDripctlConfig(file.path());
  drip::fuzz::CheckConfigOutcome(config.status(), file.path());
  if (config.ok()) FUZZ_CHECK(config->timeout.count() >= 1, "timeout below 1 ms");
  return 0;
}
