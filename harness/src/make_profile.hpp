#pragma once
// `scaleproof qualify --make-profile`: a qualification profile whose
// references are what the database measured on one machine, or on a fleet
// of named machines pooled under one name. Per benchmark case, where every
// run has the measurement service's statistics: on t_median_s, reference =
// the median over runs of each run's median call, bounds = the smallest and
// largest run's figure over the reference. Otherwise on seconds: reference =
// the median over runs of each run's median time, bounds = every run's
// fastest and slowest repetition over the reference. Bounds are widened to
// at least 1 -/+ min_width so that a case measured once or very steadily
// does not get bounds narrower than the declared minimum.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "db/db.hpp"

namespace sp {

struct MakeProfileOptions {
  std::vector<std::string> machines;  // the runs' host names (empty: this host)
  std::string name;                   // the references' machine name ("" = the one machine, else "fleet")
  double min_width = 0.05;            // bounds at least [1 - w, 1 + w]
};

// Throws InputError when no run of those machines holds a benchmark time.
nlohmann::json make_profile(db::Database& d, const MakeProfileOptions& o);

}  // namespace sp
