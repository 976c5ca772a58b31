#pragma once
// The measurement service as techniques see it. The harness owns every
// clock: no technique, kernel or family reads one.
// - The runner times whole calls of a variant (warm-up, barrier, fence,
//   every iteration on every rank) and writes the statistics.
// - Extra timings a technique needs (its project variant against the
//   baseline call by call, a calibration cycle in between timed calls, a
//   second kernel to compare with, reference shapes) are declared as
//   Probes; the service runs them through Technique::run_probe() and writes
//   the result as a counter.
// - Time split into phases inside one call (the two halves of a ring
//   all-reduce, a pipeline stage's idle time) is recorded through a
//   PhaseClock, a handle whose clock the harness reads.
// docs/ADDING_A_TECHNIQUE.md, "Timing", says which to use when.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace sp {

// Order statistics of a sample of times (seconds).
struct TimeStats {
  size_t n = 0;
  double min = 0, median = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};
// The q-quantile (0 <= q <= 1) of ascending values: linear interpolation
// between the two closest ranks at position q (n - 1), so that q = 0 is the
// minimum, q = 1 the maximum and q = 0.5 the usual median. 0 when empty.
double percentile(const std::vector<double>& sorted, double q);
// The median of values in any order (percentile at q = 0.5). 0 when empty.
double median(std::vector<double> values);
TimeStats summarize(std::vector<double> seconds);
// Slowest over fastest of the ranks' times: 1 = balanced. 1 for fewer than
// two values; infinite when the fastest is 0 and the slowest is not.
double imbalance(const std::vector<double>& per_rank);

// A harness-owned clock handle for phases inside one call. time() runs f
// and records its seconds on this rank under `phase` (it does not fence:
// phases of host code, or code that synchronizes itself). The reading is
// returned too, for a kernel that fits a model to its samples.
class PhaseClock {
 public:
  template <class F>
  double time(const std::string& phase, F&& f) {
    const int64_t start = now_ns();
    f();
    const double s = seconds_since(start);
    record(phase, s);
    return s;
  }
  // Sum of the readings of each phase since the last clear().
  const std::map<std::string, double>& totals() const { return totals_; }
  double total(const std::string& phase) const;
  long count(const std::string& phase) const;
  void clear() { totals_.clear(), counts_.clear(); }

 private:
  friend double per_call_seconds(const std::function<void()>&, double, int, int);
  friend class Elapsed;
  static int64_t now_ns();
  static double seconds_since(int64_t start_ns);
  void record(const std::string& phase, double s);
  std::map<std::string, double> totals_;
  std::map<std::string, long> counts_;
};

// A harness-owned clock handle for a timeline inside one call: seconds
// since the handle was made (a pipeline stage's busy intervals, whose
// starts and ends are compared across stages), or a bound on how long a
// loop may drive progress. Monotonic, the same clock as PhaseClock's.
class Elapsed {
 public:
  Elapsed();
  double seconds() const;

 private:
  int64_t start_ns_;
};

// A timing a technique needs besides its variant's timed loop. The service
// runs it after that loop, on the same setup; several calls are timed in
// turn, call by call (so drift on a shared machine hits them alike). It
// writes, in seconds where a time:
// - `each` given (one name per call): the statistic of each call's times;
// - else one call: counter `name`, the statistic of its timed calls;
// - else two calls: counter `name` = stat(calls[1]) / stat(calls[0]),
//   calls[0]'s speed relative to calls[1]'s;
// - else more: the same ratio for each later call k, counter
//   `name`.calls[k], and counter `name` the smallest of them (calls[0]'s
//   speed relative to the fastest of the others).
// Each timed call is preceded by `settle` untimed calls of itself and
// followed by `after` (an untimed step, e.g. a calibration sample; "" for
// none). The call names are the technique's own; run_probe() runs them.
struct Probe {
  enum class Stat { median, min };
  std::string name;
  std::vector<std::string> calls;
  std::string after;
  int samples = 9;
  int settle = 0;
  Stat stat = Stat::median;
  std::vector<std::string> each;
  // "": a timed call's time is the whole call's. Otherwise it is what the
  // call recorded under this phase of the technique's PhaseClock
  // (Technique::phase_clock()), the slowest rank's: a part of the call,
  // e.g. a training step without its optimizer update.
  std::string phase;
};

// Seconds per call of f, for a rate measured in passing (a reference rate
// a technique compares itself with, e.g. its GEMM at its shapes): f is
// called back to back, fenced after each call, until `min_seconds` have
// passed and at least `min_calls` calls were made; the result is the median
// over `runs` such runs of their mean call. This rank's time, not a
// collective: every rank may call it on its own.
double per_call_seconds(const std::function<void()>& f, double min_seconds = 5e-3, int min_calls = 2, int runs = 3);

// The schedule the service follows for calls taken in turn.
enum class TurnStep { warmup, settle, timed, after };
struct TurnSchedule {
  int warmup = 0;      // untimed calls of each, before the first sample
  int settle = 0;      // untimed calls of the same one before each timed call
  int samples = 9;     // timed calls of each
  bool after = false;  // an `after` step after each timed call
};
// For sample i = 0..samples-1, for each k: settle, timed, after. `step`
// does the work of call k at each step; the service barriers and fences
// around a timed step and reads the clock. Returns the timed seconds,
// result[k][i], each the slowest rank's (collective over ranks).
std::vector<std::vector<double>> interleave(size_t k, const TurnSchedule& s,
                                            const std::function<void(size_t, TurnStep)>& step);

}  // namespace sp
