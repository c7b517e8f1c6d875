#include "collector/leak_report_metrics.h"

namespace drip::collector {

void LeakReportMetrics::Set(prometheus::Family<prometheus::Gauge>& family, const Labels& labels,
                            double value, std::map<Labels, prometheus::Gauge*>* next) {
  prometheus::Gauge& gauge = family.Add(labels);
  gauge.Set(value);
  (*next)[labels] = &gauge;
}

void LeakReportMetrics::RemoveStale(prometheus::Family<prometheus::Gauge>& family,
                                    const std::map<Labels, prometheus::Gauge*>& previous,
                                    const std::map<Labels, prometheus::Gauge*>& next) {
  for (const auto& [labels, gauge] : previous) {
    if (!next.contains(labels)) family.Remove(gauge);
  }
}

void LeakReportMetrics::Refresh(const std::vector<drip::v1::LeakReport>& unresolved,
                                const LeakReportBook::Counts& counts) {
  std::map<Labels, prometheus::Gauge*> open;
  std::map<Labels, prometheus::Gauge*> eta;
  std::map<Labels, prometheus::Gauge*> growth;
  for (const drip::v1::LeakReport& r : unresolved) {
    Set(metrics_->leaks_open,
        {{"component", r.component()}, {"severity", r.severity()}, {"state", r.state()}}, 1, &open);
    for (const drip::v1::LeakHost& h : r.hosts()) {
      if (!h.active()) continue;
      const Labels labels = {{"component", r.component()}, {"host", h.host()}};
      Set(metrics_->leak_host_growth, labels, h.growth_bytes_per_hour(), &growth);
      if (h.has_eta_to_oom_seconds()) {
        Set(metrics_->leak_host_eta, labels, h.eta_to_oom_seconds(), &eta);
      }
    }
  }
  RemoveStale(metrics_->leaks_open, open_, open);
  RemoveStale(metrics_->leak_host_eta, eta_, eta);
  RemoveStale(metrics_->leak_host_growth, growth_, growth);
  open_ = std::move(open);
  eta_ = std::move(eta);
  growth_ = std::move(growth);

  metrics_->leak_reports_opened.Increment(static_cast<double>(counts.opened - counted_.opened));
  metrics_->leak_reports_resolved.Increment(
      static_cast<double>(counts.resolved - counted_.resolved));
  metrics_->report_store_errors.Increment(
      static_cast<double>(counts.store_errors - counted_.store_errors));
  counted_ = counts;
}

}  // namespace drip::collector
