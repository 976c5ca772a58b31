#pragma once
// The history gate: the last run of a case against the median of the
// previous `window` runs on the same machine. A regression is a last median
// time above reference x (1 + threshold): the threshold is declared by the
// caller, never derived from the data it judges. The figure judged is the
// median call (Timing::call_median) when the last run and every previous run
// of the window have the measurement service's statistics: a median over
// calls is not moved by the few preempted calls that lift a mean per call on
// a shared machine. Otherwise it is the median over repetitions of the time
// per call (Timing::median), for results written before the service.
#include <string>
#include <vector>

#include "db/query.hpp"

namespace sp::db {

struct TrendVerdict {
  bool judged = false;  // false: fewer than one previous run on the last run's machine
  bool regression = false;
  bool calls = false;    // true: the median calls judged, else the repetitions' medians
  double last = 0;       // the last run's figure
  double reference = 0;  // median of the previous runs' figures
  double ratio = 0;      // last / reference
  int previous = 0;      // runs the reference was formed from
  std::string machine;   // the last run's machine
};

TrendVerdict judge_trend(const std::vector<TrendPoint>& points, int window, double threshold);

}  // namespace sp::db
