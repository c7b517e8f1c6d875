// FleetScorer: scores a detector's flags against a synthetic fleet's labels, per
// (host, component) and per component, with detection delays — the same way for Drip
// and for the baselines it is compared with in bench/.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tests/synthetic/fleet_generator.h"

namespace drip::synthetic {

// One series a detector flagged, and when.
struct Flag {
  std::string host;
  std::string component;
  int64_t first_flagged = 0;
};

struct Confusion {
  int true_positives = 0;
  int false_positives = 0;
  int false_negatives = 0;
  int true_negatives = 0;
  double precision() const;
  double recall() const;
  double f1() const;
};

// One leaking series and what a detector made of it.
struct LeakOutcome {
  Behaviour behaviour = Behaviour::kSlowLeak;
  double bytes_per_hour = 0;
  double fraction_per_hour = 0;   // of the series' base size
  bool running_at_start = false;  // leaking before the series was first seen
  bool found = false;             // flagged after the leak began
  double delay_s = 0;             // flag - (leak start, or first sample when running before)
  int64_t first_oom_s = -1;       // the first OOM kill the leak caused (-1: none)
  int64_t seen_from_s = 0;        // the leak's start, or the series' first sample if later
  int64_t flagged_s = -1;         // when the detector first flagged it (-1: never)
};

struct FleetScore {
  Confusion per_series;     // per (host, component)
  Confusion per_component;  // a component leaks if any of its series leaks
  // Detection delays (s) of true positives, by behaviour, and for 1 MB/h-or-slower leaks.
  std::map<Behaviour, std::vector<double>> delays_by_behaviour;
  std::vector<double> slow_leak_delays;  // leaks of at most 1 MiB/h
  int slow_leaks = 0;                    // how many such leaks there were
  std::vector<LeakOutcome> leaks;        // every leaking series
  // False positives and negatives by behaviour, to see what fooled a detector.
  std::map<Behaviour, int> false_positives_by_behaviour;
  std::map<Behaviour, int> false_negatives_by_behaviour;
  // Descriptions of the first few mistakes, for test failure messages.
  std::vector<std::string> mistakes;
};

// A flag before the series' leak begins is a false positive (it was not the leak).
FleetScore ScoreFleet(const std::vector<SeriesSpec>& series, const std::vector<Flag>& flags);

double Median(std::vector<double> values);

}  // namespace drip::synthetic
