#include "scaling_report.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "results.hpp"

namespace fs = std::filesystem;

namespace sp {

namespace {

std::string g(const nlohmann::json& v, const char* f = "%.4g") {
  if (!v.is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v.get<double>());
  return buf;
}

std::string launches_table(const nlohmann::json& sweep) {
  std::string s =
      "### Launches\n\n| # | ranks | threads | params | status | result | oversubscribed | load (1 min) | results or "
      "diagnosis |\n|---|---|---|---|---|---|---|---|---|\n";
  int i = 0, loaded = 0;
  for (auto& l : sweep["launches"]) {
    const bool ok = l.value("status", "") == "ok";
    s += "| " + std::to_string(i++) + " | " + std::to_string(l.value("ranks", 0)) + " | " +
         std::to_string(l.value("threads", 0)) + " | " + l.value("params", "") + " | " +
         (ok ? "ok" : "**" + l.value("status", "") + "**") + " | " + l.value("result", "") + " | " +
         (l.contains("oversubscribed") ? (l["oversubscribed"].get<bool>() ? "yes" : "no") : "-") + " | " +
         g(l.value("load_1min", nlohmann::json()), "%.2f") + " | " +
         (ok ? "[" + l.value("results", "") + "](" + l.value("results", "") + "/bench.json)"
             : l.value("diagnosis", "")) +
         " |\n";
    loaded += l.value("load_1min", 0.0) > sweep.value("cores", 0);
  }
  if (loaded)
    s += "\n**Loaded machine**: " + std::to_string(loaded) +
         " launch(es) started with a 1-minute load average above the " + std::to_string(sweep.value("cores", 0)) +
         " cores: other work competed for the cores, and their timings are disturbed.\n";
  return s + "\n";
}

std::string series_section(const nlohmann::json& fit, size_t index, const std::string& dir) {
  const std::string axis = fit.value("axis", "ranks");
  const bool strong = fit.value("mode", "") == "strong";
  std::string s = "### " + fit.value("variant", "") + " " + fit.value("params", "") + "\n\n";
  const std::string png = "scaling-" + std::to_string(index) + ".png";
  if (fs::exists(fs::path(dir) / png)) s += "![speedup, efficiency and Karp-Flatt e(N)](" + png + ")\n\n";
  s += "| " + axis + " | time (s) | " + (strong ? "speedup" : "scaled speedup") +
       " | fitted law | measured / law | efficiency | Karp-Flatt e(N) | timing |\n|---|---|---|---|---|---|---|---|\n";
  for (auto& p : fit["points"])
    s += "| " + g(p["n"], "%g") + " | " + g(p["seconds"]) + " | " + g(p["speedup"]) + " | " + g(p["law_speedup"]) +
         " | " + g(p["ratio_to_law"]) + " | " + g(p["efficiency"]) + " | " + g(p["karp_flatt"]) + " | " +
         (p.value("timed", false) ? "timed" : "oversubscribed: not fitted") + " |\n";
  auto& ref = fit["reference"];
  s += "\nReference time: " + g(ref["seconds"]) + " s at " + axis + " = " + g(ref["n"], "%g") + " (" +
       ref.value("source", "") + ").\n";
  if (strong) {
    auto& a = fit["amdahl"];
    s += "Amdahl fit (least squares of T on 1/" + axis + "): T_s = " + g(a["t_serial"]) +
         " s, T_p = " + g(a["t_parallel"]) + " s, **f = " + g(a["f"]) + "**, rms relative residual " +
         g(a["rms_rel_residual"]) + ", " + std::to_string(a.value("points", 0)) + " points, " +
         std::to_string(a.value("dof", 0)) + " degree(s) of freedom.\n";
  } else {
    auto& gu = fit["gustafson"];
    s += "Gustafson fit (S - 1 = f (N - 1), least squares): **f = " + g(gu["f"]) + "**, " +
         std::to_string(gu.value("dof", 0)) + " degree(s) of freedom.\n";
  }
  auto& tr = fit["karp_flatt_trend"];
  s += "Karp-Flatt e(N) trend: **" + tr.value("trend", "") + "** (slope " + g(tr["slope"]) + " per " + axis +
       ", change " + g(tr["change"]) + " across the timed range, tolerance " + g(tr["tolerance"]) +
       "): constant means Amdahl holds, growing means parallel overhead.\n";
  s += "Verdict: **" + fit["verdict"].value("status", "") + "** " + fit["verdict"].value("note", "") + ".\n\n";
  return s;
}

}  // namespace

std::string render_scaling(const std::string& dir, const std::string& plot_note) {
  const auto& sweep = read_json((fs::path(dir) / "sweep.json").string());
  const auto& fits = read_json((fs::path(dir) / "fits.json").string());
  std::string counts;
  for (auto& c : sweep["counts"]) counts += (counts.empty() ? "" : ",") + std::to_string(c.get<int>());
  std::string s = "## Scaling: " + sweep.value("technique", "") + ", " + sweep.value("mode", "") + " scaling over " +
                  sweep.value("axis", "") + " " + counts + "\n\n";
  s += "Launcher `" + sweep.value("launcher", "") + "`, watchdog timeout " + g(sweep["timeout_s"], "%g") +
       " s per launch, " + std::to_string(sweep.value("cores", 0)) + " cores, declared band +/-" +
       g(sweep["band"], "%g") + " around the fitted law";
  if (sweep.value("mode", "") == "weak") s += ", problem grows as " + sweep.value("weak_scale_param", "") + " x N";
  s += ". Formulas: docs/SCALING.md, \"Scaling laws\". Times are the " + sweep.value("statistic", "median") +
       " over repetitions (each the mean over its iterations, max over ranks), "
       "from each launch's bench.json; points where ranks x threads exceed the cores are marked oversubscribed, "
       "shown hollow in the plots and left out of every fit and verdict.\n\n";
  if (!plot_note.empty()) s += "_" + plot_note + "_\n\n";
  s += launches_table(sweep);
  size_t i = 0;
  for (auto& f : fits) s += series_section(f, i++, dir);
  return s;
}

}  // namespace sp
