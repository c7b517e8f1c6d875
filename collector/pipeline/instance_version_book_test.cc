#include "collector/pipeline/instance_version_book.h"

#include "gtest/gtest.h"

namespace drip::collector {
namespace {

drip::v1::InstanceVersion Version(const std::string& host, const std::string& instance,
                                  int64_t first_seen_s, const std::string& label,
                                  const std::string& build_id = "") {
  drip::v1::InstanceVersion v;
  v.set_host(host);
  v.set_component("svc:api.service");
  v.set_instance(instance);
  v.set_first_seen_ms(first_seen_s * 1000);
  v.set_label(label);
  v.set_build_id(build_id);
  return v;
}

TEST(InstanceVersionBookTest, RestartsOnOneVersionAreOneEraAndChangesStartNewOnes) {
  InstanceVersionBook book;
  book.Add(Version("web-1", "1@0", 0, "1.0"));
  book.Add(Version("web-1", "2@100", 100, "1.0"));  // a restart, same version
  book.Add(Version("web-1", "3@200", 200, "1.1"));
  book.Add(Version("web-2", "9@0", 0, "1.0"));
  std::vector<analyzer::HostVersions> fleet = book.Fleet("svc:api.service");
  ASSERT_EQ(fleet.size(), 2u);
  EXPECT_EQ(fleet[0].host, "web-1");
  ASSERT_EQ(fleet[0].runs.size(), 2u);
  EXPECT_EQ(fleet[0].runs[0].version, "1.0");
  EXPECT_EQ(fleet[0].runs[0].since_s, 0);
  EXPECT_EQ(fleet[0].runs[0].instance, "2@100");  // the era's latest instance
  EXPECT_EQ(fleet[0].runs[1].version, "1.1");
  EXPECT_EQ(fleet[0].runs[1].since_s, 200);
  EXPECT_EQ(book.size(), 3u);
  EXPECT_TRUE(book.Fleet("svc:other.service").empty());
}

TEST(InstanceVersionBookTest, KeepsTheLatestErasAndDropsWhatArrivesOutOfOrder) {
  InstanceVersionBook book;
  for (int i = 0; i < 7; ++i) {
    book.Add(Version("web-1", std::to_string(i), i * 100, "v" + std::to_string(i)));
  }
  book.Add(Version("web-1", "late", 50, "old"));
  std::vector<analyzer::HostVersions> fleet = book.Fleet("svc:api.service");
  ASSERT_EQ(fleet.size(), 1u);
  ASSERT_EQ(fleet[0].runs.size(), InstanceVersionBook::kErasPerComponent);
  EXPECT_EQ(fleet[0].runs.front().version, "v3");
  EXPECT_EQ(fleet[0].runs.back().version, "v6");
}

TEST(InstanceVersionBookTest, AVersionIsItsLabelElseItsBuildIdPrefix) {
  EXPECT_EQ(InstanceVersionBook::VersionName(Version("h", "i", 0, "2.4.1", "ab")), "2.4.1");
  EXPECT_EQ(InstanceVersionBook::VersionName(Version("h", "i", 0, "", "3fa9c0de1234567890abcdef")),
            "build 3fa9c0de1234");
  InstanceVersionBook book;
  book.Add(Version("h", "i", 0, ""));  // nothing known: not a version
  EXPECT_EQ(book.size(), 0u);
}

}  // namespace
}  // namespace drip::collector
