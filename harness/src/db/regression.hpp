#pragma once
// The history gate: the last run of a case against the median of the
// previous `window` runs on the same machine. A regression is a last median
// time above reference x (1 + threshold): the threshold is declared by the
// caller, never derived from the data it judges.
#include <string>
#include <vector>

#include "db/query.hpp"

namespace sp::db {

struct TrendVerdict {
  bool judged = false;  // false: fewer than one previous run on the last run's machine
  bool regression = false;
  double reference = 0;  // median of the previous runs' medians
  double ratio = 0;      // last / reference
  int previous = 0;      // runs the reference was formed from
  std::string machine;   // the last run's machine
};

TrendVerdict judge_trend(const std::vector<TrendPoint>& points, int window, double threshold);

}  // namespace sp::db
