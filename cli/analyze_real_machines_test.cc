// `dripctl analyze`, default options, on real production memory: 55 machines of the
// Alibaba cluster trace over 8 days (tests/data/README.md). No machine is known to leak,
// so every flag is a suspected false alarm; the machines run near saturation and swing
// with batch work, which is what fooled the detector before.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/analyze_command.h"
#include "nlohmann/json.hpp"

namespace drip::cli {
namespace {

// The data file, inflated into `path`.
bool Inflate(const std::string& from, const std::string& path) {
  gzFile in = gzopen(from.c_str(), "rb");
  if (in == nullptr) return false;
  std::ofstream out(path, std::ios::binary);
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(in, buffer, sizeof(buffer))) > 0) out.write(buffer, n);
  gzclose(in);
  return n == 0 && static_cast<bool>(out);
}

TEST(AnalyzeRealMachinesTest, AlibabaMachinesRaiseAtMostOneFalseAlarm) {
  const std::string csv = (std::filesystem::temp_directory_path() /
                           ("drip-alibaba-" + std::to_string(::getpid()) + ".csv"))
                              .string();
  ASSERT_TRUE(Inflate(DRIP_ALIBABA_DATA, csv)) << DRIP_ALIBABA_DATA;
  AnalyzeOptions options;
  options.input = csv;
  std::ostringstream out;
  std::ostringstream err;
  const absl::Status status = RunAnalyzeCommand(options, out, err);
  std::filesystem::remove(csv);
  ASSERT_TRUE(status.ok()) << status << err.str();
  const nlohmann::json report = nlohmann::json::parse(out.str());
  EXPECT_EQ(report["summary"]["series"], 55) << report["summary"].dump();
  EXPECT_LE(report["suspects"].size(), 1u) << report["suspects"].dump(2);
}

}  // namespace
}  // namespace drip::cli
