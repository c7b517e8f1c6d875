// LeakReportMetrics: keeps the labelled report gauges (drip_leaks_open,
// drip_leak_host_eta_to_oom_seconds, drip_leak_host_growth_bytes_per_hour) equal to the
// unresolved reports after every detector pass, removing the series of reports and hosts
// that are gone so that dashboards and alerts never see a stale leak; and advances the
// report counters by what the book counted since the last pass.
//
// Not thread-safe: Refresh runs on the leak pipeline's thread only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collector/collector_metrics.h"
#include "collector/pipeline/leak_report_book.h"
#include "drip/v1/report.pb.h"

namespace drip::collector {

class LeakReportMetrics {
 public:
  explicit LeakReportMetrics(CollectorMetrics* metrics) : metrics_(metrics) {}

  void Refresh(const std::vector<drip::v1::LeakReport>& unresolved,
               const LeakReportBook::Counts& counts);

 private:
  using Labels = std::map<std::string, std::string>;
  // Sets `labels` in `family` to `value`, remembering it in `next`.
  static void Set(prometheus::Family<prometheus::Gauge>& family, const Labels& labels, double value,
                  std::map<Labels, prometheus::Gauge*>* next);
  // Removes the series in `previous` that are not in `next`.
  static void RemoveStale(prometheus::Family<prometheus::Gauge>& family,
                          const std::map<Labels, prometheus::Gauge*>& previous,
                          const std::map<Labels, prometheus::Gauge*>& next);

  CollectorMetrics* metrics_;
  std::map<Labels, prometheus::Gauge*> open_;
  std::map<Labels, prometheus::Gauge*> eta_;
  std::map<Labels, prometheus::Gauge*> growth_;
  std::map<Labels, prometheus::Gauge*> headroom_;
  std::map<Labels, prometheus::Gauge*> limit_;
  std::map<Labels, prometheus::Gauge*> oom_kills_;
  LeakReportBook::Counts counted_;
};

}  // namespace drip::collector
