#include "make_profile.hpp"

#include <unistd.h>

#include <algorithm>

#include "db/query.hpp"
#include "reference.hpp"
#include "scaleproof/measure.hpp"
#include "scaleproof/params.hpp"

namespace sp {

namespace {

std::string this_host() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace

nlohmann::json make_profile(db::Database& d, const MakeProfileOptions& o) {
  const std::vector<std::string> machines = o.machines.empty() ? std::vector<std::string>{this_host()} : o.machines;
  const std::string name = !o.name.empty() ? o.name : machines.size() == 1 ? machines.front() : "fleet";
  std::string listed;
  for (auto& m : machines) listed += (listed.empty() ? "" : ", ") + m;
  const auto timings = db::bench_timings(d, machines);
  if (timings.empty()) throw InputError("--db " + d.path() + ": no benchmark time measured on " + listed);
  References refs;
  int runs_max = 0;
  for (auto& [key, ts] : timings) {
    // The median call where every run has the measurement service's statistics (qualify measures it as the
    // counter t_median_s of the median aggregate: the median over repetitions, as Timing::call_median);
    // otherwise the time per call of the repetitions (qualify's "seconds").
    const bool calls = std::all_of(ts.begin(), ts.end(), [](const db::Timing& t) { return t.calls; });
    std::vector<double> medians;
    double lo = INFINITY, hi = 0;
    for (auto& t : ts) {
      if (calls) {
        medians.push_back(t.call_median), lo = std::min(lo, t.call_median), hi = std::max(hi, t.call_median);
      } else {
        medians.push_back(t.median), lo = std::min(lo, t.min), hi = std::max(hi, t.max);
      }
    }
    const double ref = median(medians);
    if (!(ref > 0)) continue;
    Reference r;
    r.case_key = key;
    r.quantity = calls ? "t_median_s" : "seconds";
    r.value = ref;
    r.lower = std::min(lo / ref, 1 - o.min_width);
    r.upper = std::max(hi / ref, 1 + o.min_width);
    r.lower = std::max(r.lower, 0.0);
    refs[name].push_back(r);
    runs_max = std::max(runs_max, static_cast<int>(ts.size()));
  }
  if (refs.empty()) throw InputError("--db " + d.path() + ": no benchmark time above 0 measured on " + listed);
  return {{"machine", name},
          {"description",
           "references from " + d.path() + ": runs on " + listed + " (up to " + std::to_string(runs_max) +
               " per case); reference = median over runs of each run's median call (t_median_s; seconds, the time "
               "per call, for runs without it), bounds = observed spread, at least +/-" +
               std::to_string(o.min_width)},
          {"criteria", nlohmann::json::array({{{"name", "every benchmark within its reference for this machine"},
                                               {"kind", "reference"}}})},
          {"references", to_json(refs)}};
}

}  // namespace sp
