#include "scaleproof/measure.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "scaleproof/comm.hpp"

namespace sp {

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return percentile(values, 0.5);
}

TimeStats summarize(std::vector<double> seconds) {
  TimeStats s;
  if (seconds.empty()) return s;
  std::sort(seconds.begin(), seconds.end());
  s.n = seconds.size();
  s.min = seconds.front();
  s.max = seconds.back();
  s.median = percentile(seconds, 0.5);
  s.p90 = percentile(seconds, 0.9);
  s.p99 = percentile(seconds, 0.99);
  s.mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) / static_cast<double>(s.n);
  return s;
}

double imbalance(const std::vector<double>& per_rank) {
  if (per_rank.size() < 2) return 1;
  const auto [lo, hi] = std::minmax_element(per_rank.begin(), per_rank.end());
  if (*lo > 0) return *hi / *lo;
  return *hi > 0 ? INFINITY : 1;
}

// The one clock every timing in the suite reads: monotonic, not the wall
// clock (which NTP may step).
int64_t PhaseClock::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double PhaseClock::seconds_since(int64_t start_ns) { return static_cast<double>(now_ns() - start_ns) * 1e-9; }

void PhaseClock::record(const std::string& phase, double s) {
  totals_[phase] += s;
  ++counts_[phase];
}

double PhaseClock::total(const std::string& phase) const {
  auto it = totals_.find(phase);
  return it == totals_.end() ? 0.0 : it->second;
}

long PhaseClock::count(const std::string& phase) const {
  auto it = counts_.find(phase);
  return it == counts_.end() ? 0 : it->second;
}

Elapsed::Elapsed() : start_ns_(PhaseClock::now_ns()) {}
double Elapsed::seconds() const { return PhaseClock::seconds_since(start_ns_); }

namespace {

// One timed call: no earlier device work pending and every rank starts
// together, device work is finished before the clock stops, and the
// slowest rank's time is the call's.
double timed_call(const std::function<void()>& f) {
  const bool many = comm::size() > 1;
  Kokkos::fence();
  if (many) comm::barrier();
  PhaseClock clock;
  const double s = clock.time("call", [&] {
    f();
    Kokkos::fence();
  });
  return many ? comm::max(s) : s;
}

}  // namespace

double per_call_seconds(const std::function<void()>& f, double min_seconds, int min_calls, int runs) {
  std::vector<double> per_call;
  for (int r = 0; r < runs; ++r) {
    const int64_t start = PhaseClock::now_ns();
    int calls = 0;
    double elapsed = 0;
    do {
      f();
      Kokkos::fence();
      ++calls;
      elapsed = PhaseClock::seconds_since(start);
    } while (calls < min_calls || elapsed < min_seconds);
    per_call.push_back(elapsed / calls);
  }
  return summarize(per_call).median;
}

std::vector<std::vector<double>> interleave(size_t k, const TurnSchedule& s,
                                            const std::function<void(size_t, TurnStep)>& step) {
  for (size_t a = 0; a < k; ++a)
    for (int i = 0; i < s.warmup; ++i) step(a, TurnStep::warmup);
  std::vector<std::vector<double>> t(k);
  for (int i = 0; i < s.samples; ++i)
    for (size_t a = 0; a < k; ++a) {
      for (int j = 0; j < s.settle; ++j) step(a, TurnStep::settle);
      t[a].push_back(timed_call([&] { step(a, TurnStep::timed); }));
      if (s.after) step(a, TurnStep::after);
    }
  return t;
}

}  // namespace sp
