// `plan --verify`: measures the machine and the chosen layouts through the
// registry and the harness's runner (which owns all timing); see plan_verify.hpp.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>

#include "harness/src/models.hpp"
#include "harness/src/results.hpp"
#include "harness/src/runner.hpp"
#include "harness/src/selection.hpp"
#include "kernels/hybrid/block_shape.hpp"
#include "kernels/hybrid/cost_model.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/measure.hpp"
#include "suites/hybrid/block_pass_rates.hpp"
#include "suites/hybrid/optimizer_rate.hpp"
#include "suites/hybrid/plan_machine.hpp"
#include "suites/hybrid/plan_verify.hpp"
#include "suites/hybrid/step_sets.hpp"

namespace sp::hybrid::plan {

namespace {

// Rounds of a layout's window (measure_in_window).
constexpr int kWindowRounds = 3;

const Registered* need(const std::string& name, const std::string& what) {
  const Registered* r = Registry::get().find(name);
  if (!r) throw InputError("plan --verify: " + what + " (technique " + name + ") is not in this build");
  return r;
}

// Runs the cases; rank 0 gets the benchmark JSON back, the others null.
nlohmann::json bench(const std::vector<Case>& cases, double min_time, int repetitions = 3) {
  const std::string file =
      (std::filesystem::temp_directory_path() / ("sp-plan-verify-" + std::to_string(::getpid()) + ".json")).string();
  BenchOptions o;
  o.min_time = min_time;
  o.repetitions = repetitions;
  o.json_out = comm::rank() == 0 ? file : "";
  o.console = false;
  o.progress = comm::rank() == 0;
  run_benchmarks(cases, o);
  if (comm::rank() != 0) return nullptr;
  nlohmann::json j = read_json(file);  // Google Benchmark writes bare NaN; read_json reads it as null
  std::error_code ec;
  std::filesystem::remove(file, ec);
  return j;
}

Case make_case(const Registered* r, Params p, int validate_ranks) {
  r->make()->validate(p, validate_ranks);
  Case c;
  c.tech = r;
  c.size = Size::small;
  c.params = std::move(p);
  c.variants = {r->info.main_variant()};
  return c;
}

Params step_params(const ModelShape& m, const Layout& l) {
  Params p;
  p.set("layers", m.layers).set("hidden", m.hidden).set("heads", m.heads).set("seq", m.seq);
  p.set("batch", m.global_batch).set("dp", l.dp).set("tp", l.tp).set("pp", l.pp).set("v", l.v);
  p.set("mb", l.micro_batches).set("schedule", mp::to_string(l.schedule)).set("zero", l.zero_stage);
  p.set("storage", to_string(l.storage)).set("ckpt", l.ckpt_every).set("steps", 1);
  return p;
}

// Copies of the operands that fill twice the last-level cache, which the
// ranks of a node share: each call then reads them from memory, as the
// step's products and attention do.
long long sets_beyond_cache(double bytes_per_set) {
  return std::clamp<long long>(std::llround(std::ceil(2 * last_level_cache_bytes() / bytes_per_set)), 1, 4096);
}

// The GEMM the step multiplies with (nn::gemm, technique step_gemm) in its
// storage type and operand layout, its operands read from memory as the
// step's are.
Case gemm_case(const GemmShape& g, StorageType storage) {
  const long long sets =
      sets_beyond_cache(gemm_set_elements(double(g.m), double(g.n), double(g.k)) * element_bytes(storage));
  return make_case(need(kStepGemm, "the GEMM rate's measurement"),
                   Params{{"dtype", to_string(storage)},
                          {"M", std::to_string(g.m)},
                          {"N", std::to_string(g.n)},
                          {"K", std::to_string(g.k)},
                          {"sets", std::to_string(sets)},
                          {"ops", to_string(g.ops)}},
                   1);
}

// The ring all-reduce at `count` values of `dtype` on every rank: the
// alpha-beta-gamma calibration (its counters alpha_s, beta_s_per_B,
// gamma_s_per_B).
Case all_reduce_case(long long count, const std::string& dtype, int world) {
  Case c =
      make_case(need("all_reduce", "the alpha-beta calibration"),
                Params{{"count", std::to_string(count)}, {"dtype", dtype}, {"op", "sum"}, {"inplace", "1"}}, world);
  c.variants = {"ring"};
  return c;
}

// The element-wise layers' calibration: the step at one replica per rank
// and one micro-batch of one rank's tokens, in the storage type; it reports
// their rate (block_pass_rates.hpp). A step that does not (a stand-in)
// leaves the STREAM triad's bandwidth in its place.
Case calibration_case(const Registered* step, const ModelShape& m, StorageType storage, int world) {
  Layout cal;
  cal.dp = world, cal.micro_batches = 1, cal.storage = storage;
  return make_case(step, step_params(m, cal), world);
}

// The machine's figures measured on these ranks, the same on every rank:
// alpha, beta, gamma, the element-wise bandwidth and a GEMM rate at the
// block's largest shape (for the ranking of every layout).
MachineFigures measure_machine(const ModelShape& m, StorageType storage, int world, double min_time,
                               const Registered* step) {
  const Registered* triad = need("stream_triad", "the element-wise bandwidth's measurement");
  const int rows = m.seq * m.global_batch / world;  // one rank's tokens per step
  std::vector<Case> cases;
  // The block's largest GEMM shape, every rank at once (as in the step).
  cases.push_back(gemm_case(GemmShape{rows, m.ffn_width(), m.hidden, 1}, storage));
  // Alpha from a small message; beta and gamma at a tensor-parallel
  // all-reduce's size, one rank's activations.
  for (long long count : {256LL, static_cast<long long>(rows) * m.hidden})
    cases.push_back(all_reduce_case(count, "fp32", world));
  // Element-wise passes stream arrays of a block's activations, about one
  // rank's tokens times the MLP width: the triad at that many elements.
  cases.push_back(make_case(triad, Params{{"N", std::to_string(static_cast<long long>(rows) * m.ffn_width())}}, 1));
  // The step's element-wise layers at the same size (calibration_case),
  // whose rate replaces the triad's bandwidth where the step reports one.
  cases.push_back(calibration_case(step, m, storage, world));
  const nlohmann::json j = bench(cases, min_time);
  double f[6] = {-1, -1, -1, -1, -1, -1};
  std::string err;
  if (comm::rank() == 0) {
    try {
      const MachineFigures mf = machine_from_bench(j, "plan --verify");
      f[0] = mf.gemm_flops, f[1] = mf.tp.alpha, f[2] = mf.tp.beta, f[3] = mf.tp.gamma, f[4] = mf.elementwise_bw;
      f[5] = mf.optimizer_bw;
    } catch (const InputError& e) {
      err = e.what();
    }
  }
  for (double& x : f) x = comm::max(x);
  if (f[0] <= 0 || f[4] <= 0)
    throw InputError(err.empty() ? "plan --verify: the machine's figures could not be measured" : err);
  MachineFigures mf;
  mf.gemm_flops = f[0];
  mf.elementwise_bw = f[4];
  mf.optimizer_bw = std::max(f[5], 0.0);
  mf.tp = mf.dp = mf.pp = Link{f[1], f[2], f[3]};
  return mf;
}

// One picked layout, measured in one window with the figures its prediction
// uses: the ring all-reduce at the size of its data-parallel collectives
// (one chunk's parameters, in the gradients' type: beta and gamma of the
// data-parallel link, whose per-byte costs grow once the messages leave the
// caches), then the layout's step, which reports the layers' rates in a
// pass over a rank's blocks at its own micro-batch and tensor-parallel
// slice (block_pass_rates.hpp: the GEMM rate of every shape and operand
// layout it multiplies, the attention core's seconds per forward and
// backward call, the element-wise rate; the layers timed in the order the
// step runs them, not the step) and its optimizer kernels' rate over its
// rank's elements (optimizer_rate.hpp), in kWindowRounds rounds. On a shared
// machine whose speed drifts, the two sides of the comparison are then
// seconds apart, not the length of the whole verification. A step that
// reports none of these (a stand-in) keeps `base`'s figures. Returns the
// figures (alpha, and the other groups' links, from `base`), the same on
// every rank, and the step's seconds and its own parts (rank 0; 0 and -1
// elsewhere).
struct Window {
  MachineFigures mf;
  double step = 0, busy = -1, optimizer = -1;  // see VerifyRow
};

Window measure_in_window(const MachineFigures& base, const ModelShape& m, const Layout& l, const Case& layout,
                         double min_time) {
  const int world = comm::size();
  // The shapes outside the attention core, the same on every rank of a layout.
  const AttentionWork attention = predict_attention(m, l, 0);
  std::vector<GemmShape::Key> shapes;
  for (const GemmShape& g : predict_gemms(m, l, 0))
    if (attention.products(g) == 0) shapes.push_back(g.key());
  std::vector<Case> cases;
  const long long chunk = static_cast<long long>(blocks_per_chunk(m, l)) * block_shape(m, l).elems();
  const Case dp_link = all_reduce_case(chunk, l.storage == StorageType::fp64 ? "fp64" : "fp32", world);
  if (l.dp > 1) cases.push_back(dp_link);
  cases.push_back(layout);
  // Rates per shape, then the other figures at these offsets.
  const size_t at = shapes.size(), ew = at + 2, step = at + 3, link = at + 4, busy = at + 6, optim = at + 7,
               orate = at + 8, nf = at + 9;
  auto figures = [&](const nlohmann::json& j) {
    std::vector<double> f(nf, -1.0);
    for (const MeasuredCase& c : read_measurements(j)) {
      if (c.technique == "all_reduce" && c.params == dp_link.params.label()) {
        auto beta = c.m.counters.find("beta_s_per_B"), gamma = c.m.counters.find("gamma_s_per_B");
        if (beta != c.m.counters.end() && std::isfinite(beta->second)) f[link] = beta->second;
        if (gamma != c.m.counters.end() && std::isfinite(gamma->second)) f[link + 1] = gamma->second;
      }
      if (c.technique != layout.tech->info.name || c.params != layout.params.label()) continue;
      f[step] = c.m.seconds;
      auto positive = [&](const std::string& name, size_t i) {
        auto it = c.m.counters.find(name);
        if (it != c.m.counters.end() && std::isfinite(it->second) && it->second > 0) f[i] = it->second;
      };
      for (size_t i = 0; i < shapes.size(); ++i) positive(pass_gemm_counter(shapes[i]), i);
      positive(kAttentionForwardCounter, at), positive(kAttentionBackwardCounter, at + 1);
      positive(kElementwiseRateCounter, ew), positive(kOptimizerRateCounter, orate);
      for (auto [name, at_] : {std::pair{"busy_s_per_step", busy}, {"optimizer_s_per_step", optim}}) {
        auto p = c.m.counters.find(name);
        if (p != c.m.counters.end() && std::isfinite(p->second) && p->second >= 0) f[at_] = p->second;
      }
    }
    return f;
  };
  // kWindowRounds rounds of every case once, each figure the median of its
  // rounds: a slow phase of a shared machine then falls on the figures and
  // on the step alike, where back-to-back repetitions of each case would
  // put it on one side only.
  std::vector<std::vector<double>> rounds;
  for (int r = 0; r < kWindowRounds; ++r) {
    const nlohmann::json j = bench(cases, min_time, 1);
    if (comm::rank() == 0) rounds.push_back(figures(j));
  }
  std::vector<double> f(nf, -1.0);
  for (size_t i = 0; i < f.size() && !rounds.empty(); ++i) {
    std::vector<double> got;
    for (const auto& rf : rounds)
      if (rf[i] >= 0) got.push_back(rf[i]);
    if (!got.empty()) f[i] = median(got);
  }
  for (double& x : f) x = comm::max(x);
  MachineFigures mf = base;
  for (size_t i = 0; i < shapes.size(); ++i)
    if (f[i] > 0) mf.gemm_rate[shapes[i]] = f[i];
  if (f[at] > 0 && f[at + 1] > 0) mf.attention_seconds[attention.key()] = {f[at], f[at + 1]};
  if (f[ew] > 0) mf.elementwise_bw = f[ew];
  if (f[orate] > 0) mf.optimizer_bw = f[orate];
  if (f[link] > 0) mf.dp.beta = f[link];
  if (f[link + 1] >= 0) mf.dp.gamma = f[link + 1];
  Window w{mf};
  if (comm::rank() == 0) w.step = std::max(f[step], 0.0), w.busy = f[busy], w.optimizer = f[optim];
  return w;
}

}  // namespace

void check_verifiable(const std::string& step) {
  need(step, "the composed step");
  need(kStepGemm, "the GEMM rate's measurement");
  need("all_reduce", "the alpha-beta calibration");
  need("stream_triad", "the element-wise bandwidth's measurement");
}

void check_storage_runs(StorageType storage, int ranks, const std::string& step) {
  Layout probe;
  probe.dp = ranks;
  probe.storage = storage;
  try {
    make_case(need(step, "the composed step"), step_params(scale_down(ranks), probe), ranks);
  } catch (const InputError& e) {
    throw InputError(std::string("plan --verify: the composed step cannot run --storage ") + to_string(storage) + " (" +
                     e.what() + ")");
  }
}

VerifyResult verify(int k, StorageType storage, double min_time, const std::string& step_name, double memory_bytes) {
  check_verifiable(step_name);
  const int world = comm::size();
  if (world < 2) throw InputError("plan --verify: needs 2 or more ranks (start it under mpiexec -n 2)");
  const Registered* step = need(step_name, "the composed step");
  check_storage_runs(storage, world, step_name);
  VerifyResult r;
  r.model = scale_down(world);
  r.machine = measure_machine(r.model, storage, world, min_time, step);

  Request req;
  req.model = r.model;
  req.ranks = world;
  req.memory_bytes = memory_bytes > 0 ? memory_bytes : physical_memory_bytes() / world;
  req.storage = storage;
  req.machine = r.machine;
  const Plan plan = make_plan(req);
  std::vector<Case> cases;
  for (int i : pick_verified(static_cast<int>(plan.ranked.size()), k)) {
    VerifyRow row;
    row.planned = plan.ranked[i];
    row.position = i;
    try {
      cases.push_back(make_case(step, step_params(r.model, row.planned.layout), world));
      r.rows.push_back(row);
    } catch (const InputError& e) {  // a rule of the step's own beyond layout_error(): reported, not run
      r.refused.push_back(describe(row.planned.layout) + ": " + e.what());
    }
  }
  if (r.rows.size() < 2)
    throw InputError("plan --verify: fewer than 2 layouts to run" +
                     (r.refused.empty() ? std::string() : " (the step refused " + r.refused.front() + ")"));
  // The ranking used one GEMM rate; each row run is predicted again with
  // the rate of each shape it multiplies and the element-wise rate, measured
  // in the same window as its step.
  std::vector<double> pred, meas;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    VerifyRow& row = r.rows[i];
    const Window w = measure_in_window(r.machine, r.model, row.planned.layout, cases[i], min_time);
    const MachineFigures& mf = w.mf;
    req.machine = mf;
    row.planned.time = evaluate(req, row.planned.layout).time;
    row.measured = w.step;
    row.measured_busy = w.busy, row.measured_optimizer = w.optimizer;
    for (const auto& kv : mf.gemm_rate) r.machine.gemm_rate[kv.first] = kv.second;  // the shapes measured, reported
    for (const auto& kv : mf.attention_seconds) r.machine.attention_seconds[kv.first] = kv.second;
    if (row.measured > 0) {
      pred.push_back(row.planned.time.total);
      meas.push_back(row.measured);
    }
  }
  if (comm::rank() != 0) return r;
  r.mae = mean_abs_rel_error(pred, meas);
  r.rho = spearman(pred, meas);
  r.mae_pass = r.mae <= kMaxMeanAbsError;
  r.rho_pass = r.rho >= kMinSpearman;
  return r;
}

}  // namespace sp::hybrid::plan
