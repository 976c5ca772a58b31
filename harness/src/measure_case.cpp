#include "measure_case.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "scaleproof/comm.hpp"
#include "scaleproof/params.hpp"

namespace sp {

LoopTiming finish_loop(const std::vector<double>& mine, std::vector<double> slowest) {
  LoopTiming t;
  t.rank_seconds = comm::all_gather(summarize(mine).median);
  t.imbalance = imbalance(t.rank_seconds);
  t.stats = summarize(slowest);
  t.iteration_seconds = std::move(slowest);
  return t;
}

void timing_counters(const LoopTiming& t, std::map<std::string, double>& out) {
  out["t_min_s"] = t.stats.min;
  out["t_median_s"] = t.stats.median;
  out["t_p90_s"] = t.stats.p90;
  out["t_p99_s"] = t.stats.p99;
  out["t_max_s"] = t.stats.max;
  out["rank_imbalance"] = t.imbalance;
}

void probe_counters(const Probe& p, const std::vector<std::vector<double>>& t, std::map<std::string, double>& out) {
  auto stat = [&](const std::vector<double>& v) {
    const TimeStats s = summarize(v);
    return p.stat == Probe::Stat::min ? s.min : s.median;
  };
  if (!p.each.empty()) {
    for (size_t k = 0; k < t.size(); ++k) out[p.each[k]] = stat(t[k]);
  } else if (t.size() == 1) {
    out[p.name] = stat(t[0]);
  } else {
    const double base = stat(t[0]);
    double fastest = INFINITY;
    for (size_t k = 1; k < t.size(); ++k) {
      const double r = base > 0 ? stat(t[k]) / base : 0.0;
      if (t.size() > 2) out[p.name + "." + p.calls[k]] = r;
      fastest = std::min(fastest, r);
    }
    out[p.name] = fastest;
  }
}

void run_probes(Technique& t, const std::string& variant, std::map<std::string, double>& out) {
  for (const Probe& p : t.probes(variant)) {
    const bool named = p.each.empty() || p.each.size() == p.calls.size();
    if (p.calls.empty() || !named || p.samples < 1 || p.settle < 0)
      throw std::logic_error(t.info().name + ": probe '" + p.name +
                             "' needs calls (with a counter for each, if `each` is given) and at least one sample");
    TurnSchedule s;
    s.settle = p.settle;
    s.samples = p.samples;
    s.after = !p.after.empty();
    const PhaseClock* clock = p.phase.empty() ? nullptr : t.phase_clock();
    if (!p.phase.empty() && !clock)
      throw std::logic_error(t.info().name + ": probe '" + p.name + "' reads a phase but the technique has no clock");
    std::vector<std::vector<double>> phase(p.calls.size());  // this rank's phase seconds per timed call
    auto times = interleave(p.calls.size(), s, [&](size_t k, TurnStep step) {
      if (step != TurnStep::timed || !clock) return t.run_probe(step == TurnStep::after ? p.after : p.calls[k]);
      const double before = clock->total(p.phase);
      t.run_probe(p.calls[k]);
      phase[k].push_back(clock->total(p.phase) - before);
    });
    if (clock)  // the slowest rank's phase, sample by sample (every rank in the same order)
      for (size_t k = 0; k < phase.size(); ++k)
        for (size_t i = 0; i < phase[k].size(); ++i) times[k][i] = comm::max(phase[k][i]);
    probe_counters(p, times, out);
  }
  t.probes_done(variant, out);
}

std::vector<double> thin_samples(const std::vector<double>& all, size_t most, size_t& stride) {
  stride = most == 0 || all.size() <= most ? 1 : (all.size() + most - 1) / most;
  if (stride == 1) return all;
  std::vector<double> kept;
  kept.reserve(all.size() / stride + 1);
  for (size_t i = 0; i < all.size(); i += stride) kept.push_back(all[i]);
  return kept;
}

std::string bench_entry_case(const nlohmann::json& entry) {
  std::string name = entry.value("run_name", entry.value("name", ""));
  const std::string suffix = "/manual_time";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    name.resize(name.size() - suffix.size());
  return name;
}

void attach_samples(nlohmann::json& bench, const std::map<std::string, std::vector<LoopTiming>>& loops) {
  std::map<std::string, size_t> next;
  for (auto& b : bench["benchmarks"]) {
    if (b.value("run_type", "iteration") != "iteration") continue;
    const std::string name = bench_entry_case(b);
    auto it = loops.find(name);
    if (it == loops.end()) continue;
    const auto iterations = b.value("iterations", 0LL);
    size_t& i = next[name];
    while (i < it->second.size() && static_cast<long long>(it->second[i].iteration_seconds.size()) != iterations) ++i;
    if (i == it->second.size()) continue;
    size_t stride = 1;
    b["iteration_seconds"] = thin_samples(it->second[i].iteration_seconds, kKeptIterations, stride);
    b["iteration_seconds_stride"] = stride;
    b["rank_seconds"] = it->second[i].rank_seconds;
    ++i;
  }
}

}  // namespace sp
