#include "collector/storage/rocksdb_report_store.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "collector/storage/rocksdb_series_store.h"
#include "collector/storage/scoped_temp_dir.h"

namespace drip::collector {
namespace {

drip::v1::LeakReport Report(const std::string& id, const std::string& state) {
  drip::v1::LeakReport r;
  r.set_id(id);
  r.set_component("svc:leaky.service");
  r.set_state(state);
  return r;
}

drip::v1::AuditEntry Entry(int64_t time_ms, const std::string& report_id,
                           const std::string& action) {
  drip::v1::AuditEntry e;
  e.set_time_ms(time_ms);
  e.set_report_id(report_id);
  e.set_action(action);
  return e;
}

std::unique_ptr<RocksDbSeriesStore> OpenStore(const std::string& path) {
  RocksDbSeriesStoreOptions options;
  options.path = path;
  options.fold_interval = std::chrono::milliseconds(0);
  auto store = RocksDbSeriesStore::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

TEST(RocksDbReportStoreTest, ReportsAndAuditSurviveReopeningTheStore) {
  ScopedTempDir dir;
  {
    auto store = OpenStore(dir.path());
    std::vector<drip::v1::AuditEntry> audit = {Entry(1000, "leak-1", "open")};
    ASSERT_TRUE(store->reports()->Write({Report("leak-1", "open")}, {}, &audit).ok());
    EXPECT_EQ(audit[0].id(), "000000000001");
    audit = {Entry(2000, "leak-1", "ack")};
    ASSERT_TRUE(store->reports()->Write({Report("leak-1", "acknowledged")}, {}, &audit).ok());
  }
  auto store = OpenStore(dir.path());
  auto reports = store->reports()->LoadReports();
  ASSERT_TRUE(reports.ok()) << reports.status();
  ASSERT_EQ(reports->size(), 1u);  // an upsert, not a second report
  EXPECT_EQ((*reports)[0].state(), "acknowledged");
  // Sequences continue after the restart instead of overwriting older entries.
  std::vector<drip::v1::AuditEntry> audit = {Entry(3000, "leak-1", "resolve")};
  ASSERT_TRUE(store->reports()->Write({}, {}, &audit).ok());
  EXPECT_EQ(audit[0].id(), "000000000003");
  auto entries = store->reports()->ReadAudit("", 0, 100);
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].action(), "resolve");  // newest first
  EXPECT_EQ((*entries)[2].action(), "open");
}

TEST(RocksDbReportStoreTest, AReportsSnapshotsAreKeptBesideItAcrossReopening) {
  ScopedTempDir dir;
  {
    auto store = OpenStore(dir.path());
    std::vector<drip::v1::AuditEntry> audit;
    auto first = std::make_shared<const std::string>("first snapshot bytes");
    ASSERT_TRUE(store->reports()
                    ->Write({Report("leak-1", "open")}, {{"leak-1", true, first}}, &audit)
                    .ok());
    auto latest = std::make_shared<const std::string>(std::string(3 << 20, 'x'));
    ASSERT_TRUE(store->reports()->Write({}, {{"leak-1", false, latest}}, &audit).ok());
    ASSERT_TRUE(
        store->reports()
            ->Write({}, {{"leak-1", false, std::make_shared<const std::string>("newer")}}, &audit)
            .ok());
  }
  auto store = OpenStore(dir.path());
  auto first = store->reports()->ReadSnapshot("leak-1", true);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, "first snapshot bytes");
  auto latest = store->reports()->ReadSnapshot("leak-1", false);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(*latest, "newer");  // replaced, not added
  auto none = store->reports()->ReadSnapshot("leak-2", true);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  // Snapshots are not reports.
  auto reports = store->reports()->LoadReports();
  ASSERT_TRUE(reports.ok());
  EXPECT_EQ(reports->size(), 1u);
}

TEST(RocksDbReportStoreTest, AuditReadsFilterByReportTimeAndLimit) {
  ScopedTempDir dir;
  auto store = OpenStore(dir.path());
  std::vector<drip::v1::AuditEntry> audit;
  for (int i = 0; i < 10; ++i) {
    audit.push_back(Entry(1000 * (i + 1), i % 2 == 0 ? "leak-1" : "leak-2", "open"));
  }
  ASSERT_TRUE(store->reports()->Write({}, {}, &audit).ok());
  auto only_two = store->reports()->ReadAudit("leak-2", 0, 100);
  ASSERT_TRUE(only_two.ok());
  EXPECT_EQ(only_two->size(), 5u);
  for (const auto& e : *only_two) EXPECT_EQ(e.report_id(), "leak-2");
  auto recent = store->reports()->ReadAudit("", 8000, 100);
  ASSERT_TRUE(recent.ok());
  EXPECT_EQ(recent->size(), 3u);
  auto limited = store->reports()->ReadAudit("", 0, 4);
  ASSERT_TRUE(limited.ok());
  ASSERT_EQ(limited->size(), 4u);
  EXPECT_EQ((*limited)[0].time_ms(), 10000);
}

TEST(RocksDbReportStoreTest, AnEmptyStoreHasNoReportsAndNoAudit) {
  ScopedTempDir dir;
  auto store = OpenStore(dir.path());
  auto reports = store->reports()->LoadReports();
  ASSERT_TRUE(reports.ok());
  EXPECT_TRUE(reports->empty());
  auto entries = store->reports()->ReadAudit("", 0, 10);
  ASSERT_TRUE(entries.ok());
  EXPECT_TRUE(entries->empty());
}

}  // namespace
}  // namespace drip::collector
