// `scaleproof scale`: the CLI of the scaling sweep (sweep.cpp runs it,
// scaling_analysis.cpp fits and judges it, scaling_report.cpp renders it).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli_checks.hpp"
#include "db/record.hpp"
#include "launch.hpp"
#include "manifest.hpp"
#include "models.hpp"
#include "plots.hpp"
#include "report.hpp"
#include "results.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/kokkos_compat.hpp"
#include "scaleproof/registry.hpp"
#include "scaling_analysis.hpp"
#include "scaling_report.hpp"
#include "sweep.hpp"

namespace sp {

namespace {

struct ScaleArgs {
  SweepOptions opt;
  std::string ranks = "1", threads = "1", out = "results", name;
  bool strict = false;
  db::Options db;
};

int run_scale(ScaleArgs& a) {
  if (comm::size() > 1) throw InputError("run `scaleproof scale` as one process: it launches the ranks itself");
  a.opt.ranks = parse_counts(a.ranks, "rank");
  a.opt.threads = parse_counts(a.threads, "thread");
  const SweepPlan plan = plan_sweep(a.opt);  // everything validated before the folder exists
  for (const auto& why : plan.left_out) std::printf("left out: %s\n", why.c_str());
  db::check_usable(a.db.under(a.out));
  ResultsDir dir(a.out, a.name);
  const std::string tmp = dir.path("");
  auto sweep = run_sweep(plan, tmp);
  dir.write_json("sweep.json", sweep);
  auto analysis = analyse_sweep(sweep);
  dir.write_json("fits.json", analysis.fits);
  dir.write_json("scaling_verdicts.json", to_json(analysis.verdicts));
  dir.write_json("manifest.json", collect_manifest({process_command_line(), 1, kx::concurrency()}));
  const std::string note = draw_plots("scaling_plots.py", tmp);
  dir.write_text("scaling.md", render_scaling(tmp, note));
  dir.write_text("report.md", render_report(tmp, std::filesystem::path(dir.final_path()).filename()));
  write_html_report(tmp);
  const std::string final_path = dir.commit();
  db::record_committed(a.db.under(a.out), final_path, "scale");

  int failed_launches = 0, failed_verdicts = 0;
  for (auto& l : sweep["launches"]) failed_launches += l.value("status", "") != "ok";
  for (auto& v : analysis.verdicts) failed_verdicts += v.status == Status::fail;
  for (auto& f : analysis.fits) {
    const bool strong = f.value("mode", "") == "strong";
    const auto& law = strong ? f["amdahl"] : f["gustafson"];
    std::printf("%s %s: %s f = %s; e(N):", f.value("variant", "").c_str(), f.value("params", "").c_str(),
                strong ? "Amdahl" : "Gustafson",
                law["f"].is_number() ? std::to_string(law["f"].get<double>()).c_str() : "-");
    for (auto& p : f["points"])
      if (p["karp_flatt"].is_number())
        std::printf(" e(%g)=%.4f%s", p["n"].get<double>(), p["karp_flatt"].get<double>(),
                    p["timed"].get<bool>() ? "" : "*");
    std::printf(" [%s]; verdict %s: %s\n", f["karp_flatt_trend"].value("trend", "").c_str(),
                f["verdict"].value("status", "").c_str(), f["verdict"].value("note", "").c_str());
  }
  if (!note.empty()) std::printf("note: %s\n", note.c_str());
  std::printf("(* oversubscribed: not meaningful for timing, left out of fits)\n");
  std::printf("results: %s\n", final_path.c_str());
  if (failed_launches)
    std::printf("%d launch(es) failed; earlier results kept in %s\n", failed_launches, final_path.c_str());
  return failed_launches || (a.strict && failed_verdicts) ? 1 : 0;
}

Registry::Command hook(CLI::App& app) {
  auto a = std::make_shared<ScaleArgs>();
  auto* c = app.add_subcommand("scale", "Scaling sweep over ranks (MPI launcher) or threads: fits, verdicts, report");
  c->add_option("--technique,-t", a->opt.technique, "The technique to sweep")->required();
  c->add_option("--ranks", a->ranks, "Rank counts, e.g. 1,2,4 (launched with --launcher)")->capture_default_str();
  c->add_option("--thread-counts", a->threads, "OpenMP threads per rank, e.g. 1,2 (the swept axis when > 1 entry)")
      ->capture_default_str();
  c->add_option("--mode", a->opt.mode, "strong (fixed total problem) or weak (problem grows with N)")
      ->capture_default_str();
  c->add_option(
      "--launcher", a->opt.launcher,
      "Launcher command with {n} for the rank count (default: mpiexec -n {n}, srun --mpi=pmi2 -n {n} inside Slurm)");
  cli::positive(c->add_option("--timeout", a->opt.timeout_s, "Watchdog: seconds per launch"), 1e6)
      ->capture_default_str();
  c->add_option("--size,-s", a->opt.size, "Parameter-set size")->capture_default_str();
  c->add_option("--set", a->opt.sets, "Override parameters: KEY=VALUE[,KEY=VALUE]");
  c->add_option("--variant", a->opt.variants, "Only these variants");
  cli::range(c->add_option("--band", a->opt.band,
                           "Accepted relative deviation from the fitted law (default: the technique's scaling_band)"),
             0, 1e6);
  c->add_option("--statistic", a->opt.statistic, "Time of a point: median or min over repetitions")
      ->capture_default_str();
  cli::range(c->add_option("--min-time", a->opt.min_time, "Seconds per benchmark repetition"), 1e-6, 3600)
      ->capture_default_str();
  cli::range(c->add_option("--repetitions,-r", a->opt.repetitions, "Benchmark repetitions"), 1, 1000)
      ->capture_default_str();
  c->add_option("--out,-o", a->out, "Parent folder for the results folder")->capture_default_str();
  c->add_option("--name", a->name, "Results folder name (default: UTC timestamp)")->check(cli::folder_name());
  db::add_options(c, a->db);
  c->add_flag("--strict", a->strict, "Exit non-zero when a scaling verdict fails");
  return {c, [a] { return run_scale(*a); }};
}

SP_REGISTER_COMMAND(hook);

}  // namespace

}  // namespace sp
