// `scaleproof nccl-tests`: the nccl-tests table for this suite's algorithms
// and the vendor baselines in one run. Sizes from -b to -e by factor -f
// (K/M/G suffixes), columns `size count type redop root | time algbw busbw
// #wrong` out of place and in place, as nccl-tests prints them, then the
// ring's reduce-scatter and all-gather phase times, the alpha-beta model's
// prediction with its relative error, and the traffic the transport counted.
//
// Differences from nccl-tests, on purpose: the collective is a positional
// argument (all_reduce instead of all_reduce_perf), -a picks algorithms
// (nccl-tests' -a averages ranks; here each call's time is the max over
// ranks, as in the rest of the suite), and the time is the median over
// individually timed calls rather than the mean of back-to-back calls.
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "scaleproof/comm.hpp"
#include "scaleproof/option_range.hpp"
#include "scaleproof/registry.hpp"
#include "kernels/collectives/algorithm.hpp"
#include "kernels/collectives/calibrate.hpp"
#include "db/record.hpp"
#include "launch.hpp"
#include "manifest.hpp"
#include "results.hpp"
#include "scaleproof/kokkos_compat.hpp"
#include "selection.hpp"
#include "suites/collectives/engine.hpp"

namespace sp::coll {
namespace {

struct Options {
  std::string coll = "all_reduce", begin = "32M", end = "32M", op = "sum", dtype = "float", algos, json;
  std::string step;
  long long factor = 2;
  int root = 0, iters = 20, warmup = 5, check = 1, settle = kSettleCalls;
  bool no_model = false;
  sp::db::Options db;  // where the --json file is recorded
};

// The --json file's folder holds its database, as a results parent does.
std::string json_parent(const std::string& file) {
  const auto dir = std::filesystem::path(file).parent_path();
  return dir.empty() ? "." : dir.string();
}

struct Timing {
  double seconds = 0;                            // per call: median over calls of the max over ranks
  long long wrong = -1;                          // -1: not checked
  std::map<std::string, double> phases;          // per call: max over ranks of each rank's median
  std::map<std::string, comm::Traffic> traffic;  // this rank's, last call
  AlphaBetaGamma model;                          // calibrated alongside on the algorithm's link pattern
  AlphaBetaGamma model_pp;                       // the same with the one-way (ping-pong) calibration
  CycleTimes cycle;                              // the calibration's ring cycle at the largest message
};

// Each call is timed on its own between barriers (max over ranks), and the
// median over calls is reported: on a shared, oversubscribed machine one
// descheduled call would dominate nccl-tests' mean of back-to-back calls.
// The algorithms compared at one size take turns call by call, so
// background load falls on all of them alike. With `model`, the alpha-beta-
// gamma calibration of each modelled algorithm is sampled between the timed
// calls too (on the same buffers), so that the prediction and the
// measurement share the machine's state. Whenever anything runs between two
// timed calls of an algorithm (another algorithm, a calibration sample),
// `settle` untimed calls of its own come first, so that the timed call
// starts, as in nccl-tests' loop of back-to-back calls, from the caches its
// own calls leave (kSettleCalls, engine.hpp): the model is calibrated in
// that state, so a call timed from another algorithm's caches would be
// judged against a prediction for a different start.
std::vector<Timing> measure(std::vector<std::unique_ptr<Engine>>& engines, const std::vector<const Algorithm*>& algos,
                            const Options& o, bool model) {
  const size_t k = algos.size();
  std::vector<Timing> t(k);
  std::vector<std::vector<double>> calls(k);
  std::vector<std::map<std::string, std::vector<double>>> ph(k);
  std::vector<std::unique_ptr<Engine::Sampler>> calib(k);
  for (size_t a = 0; a < k; ++a) {
    for (int i = 0; i < o.warmup; ++i) engines[a]->run(*algos[a]);
    if (model && has_model(*algos[a])) calib[a] = engines[a]->calibration(*algos[a]);
  }
  // The measurement service times the calls (measure.hpp): settle calls
  // whenever something else runs in between (another algorithm, or a
  // calibration sample after each timed call).
  TurnSchedule sched;
  sched.settle = k > 1 || (k == 1 && calib[0]) ? o.settle : 0;
  sched.samples = o.iters;
  sched.after = true;
  calls = interleave(k, sched, [&](size_t a, TurnStep step) {
    if (step != TurnStep::after) return engines[a]->run(*algos[a]);
    for (auto& [name, v] : engines[a]->phase_seconds()) ph[a][name].push_back(v);
    if (calib[a]) calib[a]->sample();
  });
  for (size_t a = 0; a < k; ++a) {
    if (calib[a]) t[a].model = calib[a]->fit(), t[a].model_pp = calib[a]->fit_one_way(), t[a].cycle = calib[a]->cycle();
    t[a].seconds = median(calls[a]);
    for (auto& [name, v] : ph[a]) t[a].phases[name] = comm::max(median(v));
    t[a].traffic = engines[a]->transport().traffic();
    if (o.check) {
      engines[a]->reset_inputs();
      engines[a]->run(*algos[a]);
      Kokkos::fence();
      t[a].wrong = comm::sum(static_cast<long long>(engines[a]->check().wrong));
    }
  }
  return t;
}

std::vector<size_t> sweep(const Options& o) {
  const long long b = parse_bytes(o.begin), e = parse_bytes(o.end);
  if (e < b) throw InputError("-e " + o.end + " is below -b " + o.begin);
  std::vector<size_t> sizes;
  if (!o.step.empty()) {
    const long long step = parse_bytes(o.step);
    for (long long s = b; s <= e; s += step) sizes.push_back(static_cast<size_t>(s));
  } else {
    const long long f = o.factor;  // an integer >= 2 (its declared range)
    for (long long s = b; s <= e; s = s > e / f ? e + 1 : s * f) sizes.push_back(static_cast<size_t>(s));
  }
  return sizes;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');)
    if (!x.empty()) out.push_back(x);
  return out;
}

std::string fmt_wrong(long long w) { return w < 0 ? "N/A" : std::to_string(w); }

int run(const Options& o) {
  if (!o.json.empty()) sp::db::check_usable_on_ranks(o.db.under(json_parent(o.json)));
  const int p = comm::size(), rank = comm::rank();
  const CollInfo& c = coll_info(o.coll);
  CaseSpec base;
  base.coll = c.id;
  base.dtype = parse_dtype(o.dtype);
  base.op = parse_op(o.op);
  base.root = o.root;
  const size_t elt = dtype_size(base.dtype);
  // By default every algorithm that runs at this p; named ones must run.
  std::vector<const Algorithm*> algos;
  if (o.algos.empty()) {
    for (const Algorithm* a : algorithms_of(c.id))
      if (rank_problem(*a, p).empty()) algos.push_back(a);
  } else {
    for (auto& name : split(o.algos)) algos.push_back(&algorithm(c.id, name));
  }
  // Validate everything before running anything.
  const auto sizes = sweep(o);
  for (size_t bytes : sizes) {
    CaseSpec s = base;
    s.count = bytes / elt;
    if (s.count == 0)
      throw InputError("size " + std::to_string(bytes) + " B holds no " + nccl_type_name(base.dtype) + " (" +
                       std::to_string(elt) + " B)");
    validate_case(s, p);
    for (auto* a : algos) validate_algorithm(s, a->name, p);
  }
  if (o.iters < 1 || o.warmup < 0 || o.settle < 0) throw InputError("-n must be >= 1, -w and --settle >= 0");

  // Sizes outer, algorithms inner: the algorithms compared at one size are
  // measured back to back, under the same background load.
  if (rank == 0) {
    std::printf(
        "# scaleproof nccl-tests  %s  ranks: %d  op: %s  type: %s  root: %d  iters: %d  warmup: %d  settle: %d\n",
        c.name.c_str(), p, c.has_op ? op_name(base.op) : "none", nccl_type_name(base.dtype), c.has_root ? o.root : -1,
        o.iters, o.warmup, o.settle);
    std::printf("# time: median over calls of the slowest rank; busbw = algbw * %.3g (nccl-tests)\n",
                c.busbw_factor(p));
    std::printf("#%84s%33s%s\n", "out-of-place", "in-place",
                "  | in-place: ring phases, alpha-beta model (link pattern; ping-pong), traffic");
    std::printf("# %12s %12s %6s %5s %4s %-18s %9s %8s %8s %6s %9s %8s %8s %6s  | %9s %9s %9s %7s %7s %11s %11s\n",
                "size", "count", "type", "redop", "root", "algorithm", "time", "algbw", "busbw", "#wrong", "time",
                "algbw", "busbw", "#wrong", "rs", "ag", "model", "err", "err(pp)", "tx/rank", "formula");
    std::printf("# %12s %12s %6s %5s %4s %-18s %9s %8s %8s %6s %9s %8s %8s %6s  | %9s %9s %9s %7s %7s %11s %11s\n",
                "(B)", "(elements)", "", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "",
                "(us)", "(us)", "(us)", "", "", "(B)", "(B)");
  }
  nlohmann::json rows = nlohmann::json::array();
  long long wrong = 0;               // over every checked call, as nccl-tests' "Out of bounds values"
  std::vector<std::string> summary;  // model and traffic at the largest size, per algorithm
  for (size_t bytes : sizes) {
    CaseSpec s = base;
    s.count = bytes / elt;
    const double S = static_cast<double>(s.bytes()), F = c.busbw_factor(p);
    std::vector<Timing> timed[2];
    for (int inplace = 0; inplace < 2; ++inplace) {
      s.inplace = inplace == 1;
      std::vector<std::unique_ptr<Engine>> engines;
      for (size_t a = 0; a < algos.size(); ++a) engines.push_back(std::make_unique<Engine>(s));
      timed[inplace] = measure(engines, algos, o, inplace && !o.no_model);
    }
    for (size_t ai = 0; ai < algos.size(); ++ai) {
      const Algorithm& rec = *algos[ai];
      const std::string algo = rec.name;
      const bool model = !o.no_model && has_model(rec);
      const Timing t[2] = {timed[0][ai], timed[1][ai]};
      wrong += std::max(0LL, t[0].wrong) + std::max(0LL, t[1].wrong);
      const AlphaBetaGamma abg = t[1].model;
      const double pred = model ? predict_seconds(rec, p, S, abg) : NAN;
      const bool exchange = model && rec.cycle.link == Link::exchange;
      AlphaBetaGamma pp = t[1].model_pp;
      pp.gamma = abg.gamma;
      const double pred_pp = exchange ? predict_seconds(rec, p, S, pp) : NAN;
      double tx = 0, tx_formula = 0;
      for (auto& [ph, tr] : t[1].traffic)
        if (ph != "pingpong") tx += static_cast<double>(tr.bytes_sent);  // not the calibration's
      tx = comm::max(tx);
      const auto formula = traffic_per_rank(rec, p, S);
      for (auto& [ph, b] : formula) tx_formula += b;
      auto ph = [&](const char* k) { return t[1].phases.count(k) ? t[1].phases.at(k) * 1e6 : NAN; };
      auto num = [](double v, const char* f) {
        char buf[32];
        if (std::isnan(v)) return std::string("-");
        std::snprintf(buf, sizeof buf, f, v);
        return std::string(buf);
      };
      auto bw = [&](double sec) { return sec > 0 ? S / sec / 1e9 : 0.0; };
      if (rank == 0) {
        std::printf(
            "  %12zu %12zu %6s %5s %4d %-18s %9.1f %8.2f %8.2f %6s %9.1f %8.2f %8.2f %6s  | %9s %9s %9s %7s %7s %11.0f "
            "%11s\n",
            s.bytes(), s.count, nccl_type_name(s.dtype), c.has_op ? op_name(s.op) : "none", c.has_root ? s.root : -1,
            algo.c_str(), t[0].seconds * 1e6, bw(t[0].seconds), bw(t[0].seconds) * F, fmt_wrong(t[0].wrong).c_str(),
            t[1].seconds * 1e6, bw(t[1].seconds), bw(t[1].seconds) * F, fmt_wrong(t[1].wrong).c_str(),
            num(ph("reduce-scatter"), "%.1f").c_str(), num(ph("all-gather"), "%.1f").c_str(),
            num(pred * 1e6, "%.1f").c_str(), num(pred > 0 ? 100 * (t[1].seconds / pred - 1) : NAN, "%+.1f%%").c_str(),
            num(pred_pp > 0 ? 100 * (t[1].seconds / pred_pp - 1) : NAN, "%+.1f%%").c_str(), tx,
            num(formula.empty() && p > 1 ? NAN : tx_formula, "%.0f").c_str());
        auto opt = [](double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); };
        // The calibration cycle's parts at the largest message; null where the cycle has none.
        auto part = [&](double sec) { return opt(model && sec > 0 ? sec * 1e6 : NAN); };
        rows.push_back({{"collective", c.name},
                        {"algorithm", algo},
                        {"ranks", p},
                        {"size_B", s.bytes()},
                        {"count", s.count},
                        {"type", nccl_type_name(s.dtype)},
                        {"op", op_name(s.op)},
                        {"oop_time_us", t[0].seconds * 1e6},
                        {"oop_wrong", t[0].wrong},
                        {"ip_time_us", t[1].seconds * 1e6},
                        {"ip_wrong", t[1].wrong},
                        {"algbw_GBps", bw(t[1].seconds)},
                        {"busbw_GBps", bw(t[1].seconds) * F},
                        {"rs_us", opt(ph("reduce-scatter"))},
                        {"ag_us", opt(ph("all-gather"))},
                        {"alpha_s", abg.alpha},
                        {"beta_s_per_B", abg.beta},
                        {"gamma_s_per_B", abg.gamma},
                        {"model_us", opt(pred * 1e6)},
                        {"link", exchange ? "exchange" : "one-way"},
                        {"pingpong_alpha_s", t[1].model_pp.alpha},
                        {"pingpong_beta_s_per_B", t[1].model_pp.beta},
                        {"model_pingpong_us", opt(pred_pp * 1e6)},
                        {"tx_per_rank_B", tx},
                        {"tx_formula_B", tx_formula},
                        {"calib_first_transfer_us", part(t[1].cycle.first_transfer)},
                        {"calib_reduce_us", part(t[1].cycle.reduce)},
                        {"calib_last_transfer_us", part(t[1].cycle.last_transfer)}});
      }
      if (bytes != sizes.back()) continue;
      char line[320];
      if (model) {
        int w = std::snprintf(
            line, sizeof line,
            "#   %s at %zu B: %s alpha %.3g us, beta %.4g ns/B (%.2f GB/s), gamma %.4g ns/B (%.2f GB/s)", algo.c_str(),
            s.bytes(), exchange ? "exchange" : "one-way", abg.alpha * 1e6, abg.beta * 1e9,
            abg.beta > 0 ? 1e-9 / abg.beta : 0.0, abg.gamma * 1e9, abg.gamma > 0 ? 1e-9 / abg.gamma : 0.0);
        if (exchange && w > 0 && w < static_cast<int>(sizeof line))
          std::snprintf(line + w, sizeof line - w, "; ping-pong alpha %.3g us, beta %.4g ns/B",
                        t[1].model_pp.alpha * 1e6, t[1].model_pp.beta * 1e9);
        summary.push_back(line);
      }
      for (auto& [phase, f] : formula) {  // per-phase traffic at the largest size vs the formulas
        auto it = t[1].traffic.find(phase);
        const double sent = it == t[1].traffic.end() ? 0 : static_cast<double>(it->second.bytes_sent);
        const double mx = comm::max(sent), all = comm::sum(sent);
        const int w = std::snprintf(line, sizeof line, "#   %s traffic %-18s sent/rank %12.0f B (formula %12.0f)",
                                    algo.c_str(), phase.c_str(), mx, f);
        if (rec.p_minus_1_n_per_phase)  // each phase moves (p-1)n over all ranks
          std::snprintf(line + w, sizeof line - w, ", all ranks %13.0f B ((p-1)n = %.0f)", all, (p - 1) * S);
        summary.push_back(line);
      }
    }
  }
  if (rank == 0) {
    for (auto& l : summary) std::printf("%s\n", l.c_str());
    std::printf("# Out of bounds values : %lld %s\n", wrong, wrong == 0 ? "OK" : "FAILED");
  }
  // Every results file carries its manifest (commit, compiler, Kokkos, MPI,
  // NCCL, CPU/GPU, ranks, date, command line) and the timing settings.
  // collect_manifest() is collective (ranks per node): every rank calls it.
  const nlohmann::json manifest =
      o.json.empty() ? nlohmann::json() : collect_manifest({process_command_line(), p, kx::concurrency()});
  if (rank == 0 && !o.json.empty()) {
    const nlohmann::json doc = {
        {"manifest", manifest},
        {"settings", {{"iters", o.iters}, {"warmup", o.warmup}, {"settle", o.settle}, {"check", o.check}}},
        {"rows", rows}};
    write_file_atomic(o.json, doc.dump(2) + "\n");
    sp::db::record_committed(o.db.under(json_parent(o.json)), o.json, "nccl-tests");
  }
  return wrong == 0 ? 0 : 1;  // as nccl-tests: wrong results fail the run
}

sp::Registry::Command add(CLI::App& app) {
  static Options o;
  auto* sub = app.add_subcommand("nccl-tests", "nccl-tests-style sweep of one collective: algorithms vs vendor");
  sub->add_option("collective", o.coll, "all_reduce, reduce_scatter, all_gather, broadcast, reduce")
      ->capture_default_str();
  sub->add_option("-b,--minbytes", o.begin, "Smallest size (K, M, G suffixes)")->capture_default_str();
  sub->add_option("-e,--maxbytes", o.end, "Largest size")->capture_default_str();
  auto* factor =
      sp::cli::range(sub->add_option("-f,--stepfactor", o.factor, "Multiply the size by this (an integer)"), 2, 1 << 20)
          ->capture_default_str();
  sub->add_option("-i,--stepbytes", o.step, "Add this to the size instead of -f")->excludes(factor);
  sub->add_option("-o,--op", o.op, "sum, max, min")->capture_default_str();
  sub->add_option("-d,--datatype", o.dtype, "half, float, double, int32 (or fp16, fp32, fp64)")->capture_default_str();
  sub->add_option("-a,--algorithms", o.algos, "Comma-separated algorithms (default: all that fit this rank count)");
  sp::cli::range(sub->add_option("-r,--root", o.root, "Root rank of broadcast and reduce"), 0, 1 << 30)
      ->capture_default_str();
  sp::cli::range(sub->add_option("-n,--iters", o.iters, "Timed calls per size"), 1, 1e9)->capture_default_str();
  sp::cli::range(sub->add_option("-w,--warmup_iters", o.warmup, "Untimed calls first"), 0, 1e9)->capture_default_str();
  sp::cli::range(sub->add_option("-s,--settle", o.settle,
                                 "Untimed calls of its own before each timed call, when others run in between"),
                 0, 1e6)
      ->capture_default_str();
  sp::cli::range(sub->add_option("-c,--check", o.check, "Check results (#wrong): 1 or 0"), 0, 1)->capture_default_str();
  sub->add_flag("--no-model", o.no_model, "Skip the alpha-beta calibration and prediction");
  sub->add_option("--json", o.json, "Also write the rows as JSON to this file (and record it in the results database)");
  sp::db::add_options(sub, o.db);
  return {sub, [] { return run(o); }, true};
}

SP_REGISTER_COMMAND(add);

}  // namespace
}  // namespace sp::coll
