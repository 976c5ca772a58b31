#include <algorithm>
#include "sweep.hpp"

#include <cstdio>
#include <fstream>
#include <filesystem>
#include <thread>

#include "heartbeat.hpp"
#include "models.hpp"
#include "results.hpp"

namespace fs = std::filesystem;

namespace sp {

namespace {

bool is_integer(const std::string& v) {
  if (v.empty()) return false;
  for (char ch : v)
    if (!std::isdigit(static_cast<unsigned char>(ch))) return false;
  return true;
}

// The weak-scaling parameter: declared, else the first integer parameter.
std::string weak_param_of(const Registered& r, const Params& p) {
  if (!r.info.weak_scale_param.empty()) return r.info.weak_scale_param;
  for (auto& [k, v] : p.items())
    if (is_integer(v)) return k;
  throw InputError(r.info.name + " has no integer parameter to grow in weak mode");
}

int cores() { return static_cast<int>(std::thread::hardware_concurrency()); }

// 1-minute load average: other work on the node disturbs every timing, so
// each launch records it and the report flags launches started above the cores.
double load_1min() {
  std::ifstream f("/proc/loadavg");
  double l = -1;
  f >> l;
  return l;
}

}  // namespace

Params SweepPlan::params_at(const Case& c, int n) const {
  Params p = c.params;
  if (opt.mode == "weak") p.set(weak_param, c.params.i(weak_param) * n);
  return p;
}

SweepPlan plan_sweep(const SweepOptions& opt) {
  SweepPlan plan;
  plan.opt = opt;
  if (opt.mode != "strong" && opt.mode != "weak") throw InputError("unknown mode '" + opt.mode + "' (strong or weak)");
  if (opt.ranks.size() > 1 && opt.threads.size() > 1)
    throw InputError("sweep ranks or threads, not both (one of --ranks and --thread-counts must have one entry)");
  if (opt.timeout_s <= 0) throw InputError("--timeout must be > 0 seconds");
  if (opt.statistic != "median" && opt.statistic != "min")
    throw InputError("unknown statistic '" + opt.statistic + "' (median or min)");
  plan.axis = opt.threads.size() > 1 ? "threads" : "ranks";
  plan.launcher = Launcher::from(opt.launcher);
  plan.tech = Registry::get().find(opt.technique);
  if (!plan.tech) throw InputError("unknown technique '" + opt.technique + "' (see `scaleproof list`)");
  Filter f{{}, {opt.technique}, {parse_size(opt.size)}, opt.sets, opt.variants};
  // Every point must be valid before the first launch: each rank count the
  // technique accepts, each weak-scaled shape it validates.
  for (int r : opt.ranks) plan.cases = select_cases(f, r);
  auto proto = plan.tech->make();
  if (opt.mode == "weak") plan.weak_param = weak_param_of(*plan.tech, plan.cases.front().params);
  // A variant some swept rank count cannot run (a power-of-two algorithm at
  // 3 ranks) would make launches that must fail: one the user named is an
  // input error; one selected only as part of "all variants" leaves the sweep
  // (every series needs every point) and is recorded as left out.
  const std::vector<int> launched_ranks = plan.axis == "ranks" ? opt.ranks : std::vector<int>{opt.ranks[0]};
  for (auto& c : plan.cases) {
    std::vector<std::string> keep;
    for (const auto& v : c.variants) {
      std::string why;
      for (int r : launched_ranks)
        if (why.empty()) why = proto->why_unavailable(v, r);
      if (why.empty()) {
        keep.push_back(v);
        continue;
      }
      if (std::find(opt.variants.begin(), opt.variants.end(), v) != opt.variants.end())
        throw InputError(opt.technique + ": " + why + "; choose other --ranks or --variant");
      if (std::find(plan.left_out.begin(), plan.left_out.end(), why) == plan.left_out.end())
        plan.left_out.push_back(why);
    }
    if (keep.empty())
      throw InputError(opt.technique + ": no variant can run at every rank count of --ranks (" +
                       (plan.left_out.empty() ? std::string("none selected") : plan.left_out.front()) + ")");
    c.variants = keep;
  }
  for (auto& c : plan.cases) {
    if (opt.mode == "weak" && !c.params.has(plan.weak_param))
      throw InputError(opt.technique + ": weak-scaling parameter '" + plan.weak_param + "' missing from " +
                       c.params.label());
    for (int n : plan.counts()) proto->validate(plan.params_at(c, n), plan.axis == "ranks" ? n : opt.ranks[0]);
  }
  return plan;
}

nlohmann::json run_sweep(const SweepPlan& plan, const std::string& dir) {
  const auto& o = plan.opt;
  const std::string self = self_exe();
  fs::create_directories(fs::path(dir) / "points");
  nlohmann::json sweep = {{"technique", plan.tech->info.name},
                          {"family", plan.tech->info.family},
                          {"mode", o.mode},
                          {"axis", plan.axis},
                          {"counts", plan.counts()},
                          {"size", o.size},
                          {"launcher", plan.launcher.text()},
                          {"timeout_s", o.timeout_s},
                          {"min_time_s", o.min_time},
                          {"repetitions", o.repetitions},
                          {"statistic", o.statistic},
                          {"band", o.band >= 0 ? o.band : plan.tech->info.tol.scaling_band},
                          {"cores", cores()},
                          {"weak_scale_param", plan.weak_param},
                          {"left_out", plan.left_out},
                          {"launches", nlohmann::json::array()},
                          {"series", nlohmann::json::array()}};
  std::map<std::string, size_t> series_index;  // variant + "/" + base params -> index in "series"
  const auto counts = plan.counts();
  const size_t total = counts.size() * plan.cases.size();
  size_t done = 0;
  for (size_t ci = 0; ci < plan.cases.size(); ++ci) {
    const Case& c = plan.cases[ci];
    for (int n : counts) {
      const int ranks = plan.axis == "ranks" ? n : o.ranks[0];
      const int threads = plan.axis == "threads" ? n : o.threads[0];
      const Params p = plan.params_at(c, n);
      const std::string name = "c" + std::to_string(ci) + "-r" + std::to_string(ranks) + "-t" + std::to_string(threads);
      const fs::path points = fs::path(dir) / "points";
      std::vector<std::string> argv = plan.launcher.argv(ranks);
      for (const std::string& a : {self,
                                   std::string("--threads"),
                                   std::to_string(threads),
                                   std::string("bench"),
                                   std::string("--technique"),
                                   plan.tech->info.name,
                                   std::string("--size"),
                                   o.size,
                                   std::string("--set"),
                                   p.label(),
                                   std::string("--out"),
                                   points.string(),
                                   std::string("--name"),
                                   name,
                                   std::string("--min-time"),
                                   std::to_string(o.min_time),
                                   std::string("-r"),
                                   std::to_string(o.repetitions),
                                   std::string("--db"),
                                   std::string("none")})
        argv.push_back(a);  // the sweep is recorded as one run, not point by point
      for (auto& v : c.variants) argv.push_back("--variant"), argv.push_back(v);
      const bool predicted_over = plan.launcher.local() && cores() > 0 && ranks * threads > cores();
      const double load = load_1min();
      std::printf("[scale %zu/%zu] %s %s: %d rank(s) x %d thread(s)%s%s ...\n", ++done, total,
                  plan.tech->info.name.c_str(), p.label().c_str(), ranks, threads,
                  predicted_over ? " (oversubscribed)" : "",
                  load > cores() ? (" (machine load " + std::to_string(load).substr(0, 5) + " on " +
                                    std::to_string(cores()) + " cores: timings disturbed)")
                                       .c_str()
                                 : "");
      std::fflush(stdout);
      const std::string hb = (points / (name + ".heartbeat")).string();
      auto res = run_with_watchdog(argv, {{"OMP_NUM_THREADS", std::to_string(threads)}, {"SP_HEARTBEAT_DIR", hb}},
                                   (points / (name + ".log")).string(), o.timeout_s);
      nlohmann::json launch = {{"case", ci},
                               {"n", n},
                               {"ranks", ranks},
                               {"threads", threads},
                               {"params", p.label()},
                               {"command", plan.launcher.text() + " scaleproof bench ..."},
                               {"result", res.describe()},
                               {"wall_s", res.seconds},
                               {"load_1min", load},
                               {"log", "points/" + name + ".log"}};
      const fs::path out = points / name;
      launch["status"] = res.timed_out ? "timed_out" : res.ok() && fs::exists(out / "bench.json") ? "ok" : "failed";
      if (launch["status"] != "ok") {
        launch["oversubscribed"] = predicted_over;
        // The heartbeat names the rank; the log's last error line, if any, often says why.
        const std::string tail = last_line((points / (name + ".log")).string(), true);
        launch["diagnosis"] = plan.tech->info.name + " at " + std::to_string(ranks) + " rank(s): " + res.describe() +
                              ": " + heartbeat::diagnose(hb, ranks) + (tail.empty() ? "" : "; log: " + tail);
        std::printf("    FAILED: %s (log %s)\n", launch["diagnosis"].get<std::string>().c_str(),
                    launch["log"].get<std::string>().c_str());
        sweep["launches"].push_back(launch);
        continue;
      }
      fs::remove_all(hb);  // only a failed launch's heartbeat tells anything
      launch["results"] = "points/" + name;
      const auto& manifest = read_json((out / "manifest.json").string());
      const bool over = manifest.value("oversubscribed", predicted_over);
      launch["oversubscribed"] = over;
      for (auto& m : read_measurements(read_json((out / "bench.json").string()))) {
        if (m.params != p.label()) continue;
        const std::string key = m.variant + "/" + c.params.label();
        if (!series_index.count(key)) {
          series_index[key] = sweep["series"].size();
          sweep["series"].push_back(
              {{"variant", m.variant}, {"params", c.params.label()}, {"points", nlohmann::json::array()}});
        }
        const double seconds = o.statistic == "min" && m.min_s > 0 ? m.min_s : m.m.seconds;
        sweep["series"][series_index[key]]["points"].push_back({{"n", n},
                                                                {"params", m.params},
                                                                {"seconds", seconds},
                                                                {"median_s", m.m.seconds},
                                                                {"min_s", m.min_s},
                                                                {"max_s", m.max_s},
                                                                {"oversubscribed", over},
                                                                {"launch", sweep["launches"].size()}});
        std::printf("    %-8s %.4g ms (%s)%s\n", m.variant.c_str(), 1e3 * seconds, o.statistic.c_str(),
                    over ? "  [oversubscribed: not meaningful for timing, left out of fits]" : "");
      }
      sweep["launches"].push_back(launch);
      std::fflush(stdout);
    }
  }
  std::error_code ec;
  fs::remove(fs::path(dir) / "points" / "latest", ec);  // ResultsDir's link, meaningless here
  return sweep;
}

}  // namespace sp
