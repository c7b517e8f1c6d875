#include "collector/pipeline/leak_report_metrics.h"

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
  std::map<Labels, prometheus::Gauge*> headroom;
  std::map<Labels, prometheus::Gauge*> limit;
  std::map<Labels, prometheus::Gauge*> oom_kills;
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
      Set(metrics_->leak_host_oom_kills, labels, h.oom_kills(), &oom_kills);
      if (!h.limited_by().empty()) {
        Labels limited = labels;
        limited["limited_by"] = h.limited_by();
        Set(metrics_->leak_host_headroom, limited, static_cast<double>(h.headroom_bytes()),
            &headroom);
        Set(metrics_->leak_host_limit, limited, static_cast<double>(h.limit_bytes()), &limit);
      }
    }
  }
  RemoveStale(metrics_->leaks_open, open_, open);
  RemoveStale(metrics_->leak_host_eta, eta_, eta);
  RemoveStale(metrics_->leak_host_growth, growth_, growth);
  RemoveStale(metrics_->leak_host_headroom, headroom_, headroom);
  RemoveStale(metrics_->leak_host_limit, limit_, limit);
  RemoveStale(metrics_->leak_host_oom_kills, oom_kills_, oom_kills);
  open_ = std::move(open);
  eta_ = std::move(eta);
  growth_ = std::move(growth);
  headroom_ = std::move(headroom);
  limit_ = std::move(limit);
  oom_kills_ = std::move(oom_kills);

  metrics_->leak_reports_opened.Increment(static_cast<double>(counts.opened - counted_.opened));
  metrics_->leak_reports_resolved.Increment(
      static_cast<double>(counts.resolved - counted_.resolved));
  metrics_->report_store_errors.Increment(
      static_cast<double>(counts.store_errors - counted_.store_errors));
  counted_ = counts;
}

}  // namespace drip::collector
