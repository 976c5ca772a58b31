#pragma once
// Median wall time of a few fenced calls: used where a prediction needs the
// time of a helper computation (a forward pass, a sweep point) that is not
// itself a benchmark case. Timings on a shared machine are noisy; the median
// of 5 damps single outliers, no more.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <vector>

namespace sp::precision {

template <class F>
double median_seconds(F&& f, int reps = 5) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    Kokkos::fence();
    Kokkos::Timer timer;
    f();
    Kokkos::fence();
    t.push_back(timer.seconds());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace sp::precision
