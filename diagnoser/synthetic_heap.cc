#include "diagnoser/synthetic_heap.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace drip::diagnoser::testing {

SyntheticHeap::SyntheticHeap(SyntheticOptions options)
    : options_(std::move(options)), rng_(options_.seed) {}

double SyntheticHeap::SampleProbability(int64_t size) const {
  if (options_.sampling_mean_bytes == 0) return 1;
  return 1 -
         std::exp(-static_cast<double>(size) / static_cast<double>(options_.sampling_mean_bytes));
}

uint64_t SyntheticHeap::AddSite(const AllocationSite& site) {
  Stack& stack = stacks_.emplace_back();
  stack.frames = site.frames;
  const double p = SampleProbability(site.size);
  const double to = std::min(site.to_s, options_.duration_s);
  if (site.rate_per_s > 0 && to > site.from_s) {
    const double total = (to - site.from_s) * site.rate_per_s;
    // Allocations between sampled ones: geometric, as in the sampler.
    std::geometric_distribution<int64_t> gap(std::min(p, 0.999999));
    std::uniform_real_distribution<double> unit(0, 1);
    for (double index = static_cast<double>(p < 1 ? gap(rng_) : 0); index < total;
         index += 1 + static_cast<double>(p < 1 ? gap(rng_) : 0)) {
      const double at = site.from_s + index / site.rate_per_s;
      double free_at = at + site.lifetime_s;
      if (site.exponential_lifetime) {
        free_at = at + std::exponential_distribution<double>(1 / site.lifetime_s)(rng_);
      }
      if (site.fifo_capacity > 0) {
        const double evicted_index = index + static_cast<double>(site.fifo_capacity);
        free_at = evicted_index < total ? site.from_s + evicted_index / site.rate_per_s
                                        : std::numeric_limits<double>::infinity();
      }
      if (site.leak_fraction > 0 && unit(rng_) < site.leak_fraction) {
        free_at = std::numeric_limits<double>::infinity();
      }
      // Under a duty cycle only allocations in a window are seen (the countdown to the
      // next sample runs only then too, which a Poisson process does not notice).
      const bool duty_cycled = options_.duty_on_fraction < 1;
      if (duty_cycled && at >= 0 &&
          std::fmod(at, options_.duty_period_s) >=
              options_.duty_on_fraction * options_.duty_period_s) {
        continue;
      }
      stack.objects.push_back(
          {at, free_at, static_cast<double>(site.size) / p, 1 / p, duty_cycled && at >= 0});
    }
  }
  return stacks_.size();
}

uint64_t SyntheticHeap::AddSampledObjects(const std::vector<StackFrame>& frames,
                                          const std::vector<double>& at_s, int64_t size,
                                          double lifetime_s) {
  const double p = SampleProbability(size);
  Stack& stack = stacks_.emplace_back();
  stack.frames = frames;
  for (double at : at_s) {
    stack.objects.push_back({at, at + lifetime_s, static_cast<double>(size) / p, 1 / p});
  }
  return stacks_.size();
}

double SyntheticHeap::DutyWeight(double at_s, double t_s) const {
  const double period = options_.duty_period_s;
  const double on = options_.duty_on_fraction * period;
  const double open = std::floor(at_s / period) * period;
  const double span_end = std::min(t_s, std::min(open + period, options_.duration_s));
  return std::max(1.0, (span_end - open) / std::min(span_end - open, on));
}

HeapSnapshot SyntheticHeap::Build() const {
  HeapSnapshot s;
  s.target = {4242,
              "app",
              "/usr/bin/app",
              options_.start_ms - 60'000,
              "web-1",
              "svc:app.service",
              "4242@1700000000",
              ""};
  s.mode = options_.mode;
  s.start_ms = options_.start_ms;
  s.end_ms = options_.start_ms + static_cast<int64_t>(options_.duration_s * 1000);
  s.interval_seconds = options_.interval_s;
  s.sampling_mean_bytes = options_.sampling_mean_bytes;
  s.duty_cycle.on_fraction = options_.duty_on_fraction;
  s.stop_reason = "duration";
  const bool attach = options_.mode == "attach";
  auto ms = [&](double seconds) {
    return options_.start_ms + static_cast<int64_t>(std::llround(seconds * 1000));
  };
  std::vector<double> readouts;
  for (double t = 0; t <= options_.duration_s + 1e-9; t += options_.interval_s) {
    readouts.push_back(t);
  }
  std::vector<double> heap_total(readouts.size(), 0);
  for (size_t i = 0; i < stacks_.size(); ++i) {
    const Stack& stack = stacks_[i];
    SnapshotStack& out = s.stacks.emplace_back();
    out.id = i + 1;
    out.frames = stack.frames;
    for (const Object& o : stack.objects) {
      // Attach mode starts tracking at the window's start: older objects are unseen.
      if (attach && o.at_s < 0) continue;
      if (o.at_s <= options_.duration_s) {
        if (out.first_alloc_ms == 0) out.first_alloc_ms = ms(o.at_s);
        out.first_alloc_ms = std::min(out.first_alloc_ms, ms(o.at_s));
        out.last_alloc_ms = std::max(out.last_alloc_ms, ms(o.at_s));
      }
      const double final_weight =
          o.duty_cycled ? DutyWeight(o.at_s, options_.duration_s) * o.weight : o.weight;
      if (o.at_s >= 0 && o.at_s <= options_.duration_s) {
        ++out.sampled_allocs;
        out.allocated_bytes += std::llround(final_weight);
        // Cohorts as the agent keeps them: eighths of the window by allocation time.
        constexpr size_t kCohorts = 8;
        if (out.cohorts.empty()) out.cohorts.assign(kCohorts, {});
        const size_t slice =
            std::min(kCohorts - 1, static_cast<size_t>(o.at_s / options_.duration_s * kCohorts));
        ++out.cohorts[slice].allocs;
        if (!(o.free_s >= 0 && o.free_s <= options_.duration_s)) ++out.cohorts[slice].live;
      }
      if (o.free_s >= 0 && o.free_s <= options_.duration_s) {
        ++out.sampled_frees;
        out.freed_bytes += std::llround(final_weight);
      }
    }
    for (size_t k = 0; k < readouts.size(); ++k) {
      double bytes = 0, count = 0;
      for (const Object& o : stack.objects) {
        if (o.at_s <= readouts[k] && readouts[k] < o.free_s) {
          // The process's memory holds what attach mode does not see, too.
          heap_total[k] += o.weight;
          if (attach && o.at_s < 0) continue;
          const double duty = o.duty_cycled ? DutyWeight(o.at_s, readouts[k]) : 1;
          bytes += duty * o.weight;
          count += duty * o.count;
        }
      }
      out.series.push_back({ms(readouts[k]), std::llround(bytes), std::llround(count)});
    }
    s.sampled_allocs += static_cast<uint64_t>(out.sampled_allocs);
    s.matched_frees += static_cast<uint64_t>(out.sampled_frees);
  }
  for (size_t k = 0; k < readouts.size(); ++k) {
    const int64_t anon = options_.base_anon_bytes + std::llround(heap_total[k]);
    s.rss.push_back({ms(readouts[k]), anon + (50 << 20), anon});
  }
  return s;
}

StackFrame Frame(const std::string& function, const std::string& module, const std::string& file,
                 int line, uint64_t address) {
  StackFrame f;
  f.function = function;
  f.module = module;
  f.file = file;
  f.line = line;
  f.address = address != 0 ? address : 0x400000 + (std::hash<std::string>{}(function)&0xffffff);
  f.module_offset = f.address - 0x400000;
  return f;
}

}  // namespace drip::diagnoser::testing
