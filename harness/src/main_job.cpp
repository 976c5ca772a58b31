#include "main_job.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "heartbeat.hpp"
#include "results.hpp"

namespace fs = std::filesystem;

namespace sp {

int default_launch_ranks(int cores) {
  int n = 1;
  while (n * 2 <= cores) n *= 2;
  return cores >= 2 ? std::max(n, 2) : 1;
}

namespace {

// The part's arguments that select what it runs: the main job's own filters,
// so the part's selection (scope multi-rank) is the one validated here.
std::vector<std::string> filter_args(const RunOptions& o) {
  std::vector<std::string> a;
  for (auto& x : o.families) a.insert(a.end(), {"--family", x});
  for (auto& x : o.techniques) a.insert(a.end(), {"--technique", x});
  for (auto& x : o.variants) a.insert(a.end(), {"--variant", x});
  for (auto& x : o.sets) a.insert(a.end(), {"--set", x});
  if (o.sizes.empty()) a.insert(a.end(), {"--size", to_string(kDefaultRunSize)});
  for (auto& x : o.sizes) a.insert(a.end(), {"--size", x});
  return a;
}

// A launcher that cannot start `n` ranks here (no such hosts, an allocation
// too small, a broken installation) is bad input: found before any work by
// starting `true` on every rank.
void probe_launcher(const Launcher& l, int n) {
  char log[] = "/tmp/scaleproof-probe-XXXXXX";
  const int fd = mkstemp(log);
  if (fd < 0) throw std::runtime_error("cannot create a temporary file in /tmp");
  close(fd);
  auto argv = l.argv(n);
  argv.push_back("true");
  const LaunchResult r = run_with_watchdog(argv, {}, log, 60);
  const std::string why = last_line(log);
  fs::remove(log);
  if (!r.ok())
    throw InputError("launcher '" + l.text() + "' cannot start " + std::to_string(n) + " ranks here (" + r.describe() +
                     (why.empty() ? "" : ": " + why) + ")");
}

}  // namespace

LaunchPlan plan_launch(const RunOptions& o, const Filter& f, int cores) {
  LaunchPlan p;
  Filter multi = f;
  multi.scope = RankScope::multi_rank;
  const auto techs = matching(multi);
  if (techs.empty()) return p;
  const int n = o.ranks > 0 ? o.ranks : default_launch_ranks(cores);
  if (n < 2) {
    for (auto* r : techs)
      p.skipped.push_back({{"technique", r->info.name}, {"reason", "needs >= 2 ranks; this main job runs at 1 rank"}});
    return p;
  }
  std::vector<std::string> rejected;
  p.cases = select_cases(multi, n, &rejected);
  for (auto& name : rejected)
    p.skipped.push_back({{"technique", name},
                         {"reason", "cannot use " + std::to_string(n) + " ranks (needs " +
                                        Registry::get().find(name)->info.ranks.describe() + ")"}});
  for (auto& c : p.cases)
    if (std::find(p.techniques.begin(), p.techniques.end(), c.tech->info.name) == p.techniques.end())
      p.techniques.push_back(c.tech->info.name);
  if (p.cases.empty()) return p;
  p.ranks = n;
  p.threads = std::max(1, cores / n);
  p.launcher = Launcher::from(o.launcher);
  probe_launcher(p.launcher, n);
  // The launched part has its own watchdog (no progress for --timeout s);
  // this wall-clock limit is the backstop for a launcher that never returns.
  // Generous: every benchmark repetition several times its minimum time,
  // setup and conformance per case, and a fixed start-up allowance.
  double t = 120 + std::max(0.0, o.timeout_s);
  for (auto& c : p.cases) t += static_cast<double>(c.variants.size()) * (o.repetitions * 4 * o.min_time + 20);
  p.timeout_s = 2 * t;
  return p;
}

nlohmann::json run_launch(const LaunchPlan& plan, const RunOptions& o, const std::string& dir,
                          nlohmann::json& check_rows, nlohmann::json& bench) {
  const std::string name = "r" + std::to_string(plan.ranks);
  const fs::path launches = fs::path(dir) / "launches";
  fs::create_directories(launches);
  std::vector<std::string> argv = plan.launcher.argv(plan.ranks);
  for (const std::string& a :
       {self_exe(), std::string("--threads"), std::to_string(plan.threads), std::string("run"), std::string("--part"),
        std::string("--out"), launches.string(), std::string("--name"), name, std::string("--min-time"),
        std::to_string(o.min_time), std::string("--repetitions"), std::to_string(o.repetitions)})
    argv.push_back(a);
  for (auto& a : filter_args(o)) argv.push_back(a);
  if (o.timeout_s > 0) argv.insert(argv.end(), {"--timeout", std::to_string(o.timeout_s)});
  std::string command;
  for (auto& a : argv) command += (command.empty() ? "" : " ") + a;
  // Under an outer watchdog (qualify's, say) the launch beats into the outer
  // heartbeat folder, so that a diagnosis made from outside names the
  // launched rank that hangs rather than this process, which only waits.
  const char* outer = std::getenv("SP_HEARTBEAT_DIR");
  const std::string hb = outer && *outer ? std::string(outer) : (launches / (name + ".heartbeat")).string();
  const std::string log = (launches / (name + ".log")).string();
  std::printf("launching the multi-rank techniques at %d ranks x %d thread(s): %s\n", plan.ranks, plan.threads,
              command.c_str());
  std::fflush(stdout);
  const LaunchResult res = run_with_watchdog(
      argv, {{"OMP_NUM_THREADS", std::to_string(plan.threads)}, {"SP_HEARTBEAT_DIR", hb}}, log, plan.timeout_s, true);
  std::error_code ec;
  fs::remove(launches / "latest", ec);  // the part's results link: meaningless inside this folder
  nlohmann::json rec = {{"ranks", plan.ranks},   {"threads", plan.threads},       {"launcher", plan.launcher.text()},
                        {"command", command},    {"techniques", plan.techniques}, {"result", res.describe()},
                        {"wall_s", res.seconds}, {"timeout_s", plan.timeout_s},   {"log", "launches/" + name + ".log"}};
  const fs::path part = launches / name;
  if (res.ok() && fs::exists(part / "bench.json") && fs::exists(part / "check.json")) {
    rec["status"] = "ok";
    rec["manifest"] = read_json((part / "manifest.json").string());
    for (auto& row : read_json((part / "check.json").string())) check_rows.push_back(row);
    const auto part_bench = read_json((part / "bench.json").string());
    for (auto& b : part_bench.at("benchmarks")) bench["benchmarks"].push_back(b);
    if (!(outer && *outer)) fs::remove_all(hb, ec);  // only a failed launch's heartbeat tells anything
    return rec;
  }
  rec["status"] = res.timed_out ? "timed_out" : "failed";
  const std::string tail = last_line(log, true);
  rec["diagnosis"] = std::to_string(plan.ranks) + " rank(s): " + res.describe() + ": " +
                     heartbeat::diagnose(hb, plan.ranks) + (tail.empty() ? "" : "; log: " + tail);
  std::printf("launch FAILED: %s (log %s)\n", rec["diagnosis"].get<std::string>().c_str(), log.c_str());
  return rec;
}

}  // namespace sp
