// Machine figures for the planner; see plan_machine.hpp.
#include "suites/hybrid/plan_machine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <map>
#include <tuple>
#include <utility>

#include "harness/src/models.hpp"
#include "harness/src/results.hpp"
#include "scaleproof/params.hpp"
#include "suites/hybrid/block_pass_rates.hpp"
#include "suites/hybrid/optimizer_rate.hpp"

namespace sp::hybrid::plan {

namespace {

MachineFigures uniform(double gemm, const Link& l, const std::string& what) {
  if (!(gemm > 0) || !std::isfinite(gemm)) throw InputError(what + ": no positive GEMM rate");
  if (!(l.alpha >= 0) || !std::isfinite(l.alpha) || !(l.beta > 0) || !std::isfinite(l.beta) || !(l.gamma >= 0) ||
      !std::isfinite(l.gamma))
    throw InputError(what + ": alpha must be >= 0, beta > 0 and gamma >= 0 (finite)");
  MachineFigures m;
  m.gemm_flops = gemm;
  m.tp = m.dp = m.pp = l;
  return m;
}

}  // namespace

MachineFigures machine_from_figures(double gemm_gflops, double alpha_us, double beta_gbs, double gamma_gbs) {
  Link l;
  l.alpha = alpha_us * 1e-6;
  l.beta = beta_gbs > 0 ? 1e-9 / beta_gbs : 0;
  l.gamma = gamma_gbs > 0 ? 1e-9 / gamma_gbs : 0;
  return uniform(gemm_gflops * 1e9, l, "plan: --gemm-gflops, --alpha-us, --beta-gbs");
}

namespace {

// gemm_flops: the best median rate of the project's GEMM over its shapes;
// gemm_rate: the best at each shape and operand layout (step_gemm's `ops`;
// A B where a case has none). Zero and empty when none ran. The GEMM is the
// tiled kernel the composed step multiplies with: technique step_gemm (its
// own product, in its storage type) or gemm (fp32, fp64), variant kokkos; a
// run measures one storage type.
MachineFigures gemm_rates(const std::vector<MeasuredCase>& cases) {
  MachineFigures mf;
  for (const MeasuredCase& c : cases) {
    if ((c.technique != "step_gemm" && c.technique != "gemm") || c.variant != "kokkos" || !(c.m.seconds > 0)) continue;
    auto it = c.m.counters.find("flop");
    const double rate = it == c.m.counters.end() ? NAN : it->second / c.m.seconds;
    if (!(rate > 0) || !std::isfinite(rate)) continue;
    mf.gemm_flops = std::max(mf.gemm_flops, rate);
    const Params p = Params::parse(c.params);
    GemmOps ops = GemmOps::nn;
    if (!parse_gemm_ops(p.s_or("ops", "nn"), ops)) continue;
    double& r = mf.gemm_rate[{p.i_or("M", 0), p.i_or("N", 0), p.i_or("K", 0), ops}];
    r = std::max(r, rate);
  }
  return mf;
}

// The attention core's seconds per forward and per backward call at each
// shape where technique step_attention (variant kokkos) ran both passes:
// the fastest median of each.
std::map<std::tuple<int, int, int, int>, std::pair<double, double>> attention_times(
    const std::vector<MeasuredCase>& cases) {
  std::map<std::tuple<int, int, int, int>, std::pair<double, double>> t;
  for (const MeasuredCase& c : cases) {
    if (c.technique != "step_attention" || c.variant != "kokkos" || !(c.m.seconds > 0)) continue;
    const Params p = Params::parse(c.params);
    const std::tuple<int, int, int, int> key{int(p.i_or("b", 0)), int(p.i_or("s", 0)), int(p.i_or("heads", 0)),
                                             int(p.i_or("d", 0))};
    auto& times = t.try_emplace(key, INFINITY, INFINITY).first->second;
    double& x = p.s_or("pass", "") == "forward" ? times.first : times.second;
    x = std::min(x, c.m.seconds);
  }
  for (auto it = t.begin(); it != t.end();)  // a shape needs both passes
    it = std::isfinite(it->second.first) && std::isfinite(it->second.second) ? std::next(it) : t.erase(it);
  return t;
}

}  // namespace

MachineFigures machine_from_bench(const nlohmann::json& bench, const std::string& what) {
  // Latency from the smallest message's calibration (where alpha dominates
  // the time), per-byte costs from the largest's (where beta and gamma do).
  double smallest = INFINITY, largest = -1, stream = 0, layers = 0, optimizer = 0;
  Link small, large;
  const std::vector<MeasuredCase> cases = read_measurements(bench);
  const MachineFigures gemms = gemm_rates(cases);
  for (const MeasuredCase& c : cases) {
    auto counter = [&](const char* k) {
      auto it = c.m.counters.find(k);
      return it == c.m.counters.end() ? NAN : it->second;
    };
    if (c.technique == "stream_triad" && c.variant == "kokkos" && c.m.seconds > 0)
      stream = std::max(stream, counter("bytes") / c.m.seconds);
    // The step's own element-wise layers' and optimizer's rates (hybrid_step's counters).
    const double ew = counter(kElementwiseRateCounter), opt = counter(kOptimizerRateCounter);
    if (std::isfinite(ew) && ew > 0) layers = std::max(layers, ew);
    if (std::isfinite(opt) && opt > 0) optimizer = std::max(optimizer, opt);
    if (c.technique == "all_reduce" && c.variant == "ring" && !std::isnan(counter("alpha_s"))) {
      const double count = static_cast<double>(Params::parse(c.params).i_or("count", 0));
      const Link l{counter("alpha_s"), counter("beta_s_per_B"), counter("gamma_s_per_B")};
      if (count < smallest) smallest = count, small = l;
      if (count > largest) largest = count, large = l;
    }
  }
  if (gemms.gemm_flops <= 0)
    throw InputError(what + ": no measured rate of the project's GEMM (technique step_gemm or gemm, variant kokkos)");
  if (largest < 0)
    throw InputError(what + ": no alpha-beta calibration (technique all_reduce, variant ring, at 2 or more ranks)");
  Link link{small.alpha, large.beta, std::isnan(large.gamma) ? 0.0 : large.gamma};
  MachineFigures mf = uniform(gemms.gemm_flops, link, what);
  mf.gemm_rate = gemms.gemm_rate;
  mf.attention_seconds = attention_times(cases);
  // The element-wise layers' measured rate where a step reported it, else
  // the STREAM triad's bandwidth.
  mf.elementwise_bw = layers > 0 ? layers : std::isfinite(stream) ? stream : 0.0;
  mf.optimizer_bw = optimizer;  // 0: the element-wise bandwidth stands in
  return mf;
}

MachineFigures machine_from_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = path;
  // A qualification folder (`scaleproof qualify`) judged a results folder:
  // its own run ("run") or the one --results named.
  if (fs::is_directory(dir, ec) && !fs::exists(dir / "bench.json", ec) && fs::exists(dir / "qualification.json", ec)) {
    const nlohmann::json& q = read_json((dir / "qualification.json").string());
    try {
      const fs::path results = q.at("results").get<std::string>();
      dir = results.is_absolute() ? results : dir / results;
    } catch (const nlohmann::json::exception& e) {
      throw InputError("--machine: " + input_error_from(e));
    }
  }
  const std::string file = fs::is_directory(dir, ec) ? (dir / "bench.json").string() : path;
  if (!fs::is_regular_file(file, ec)) throw InputError("--machine: " + file + " does not exist");
  const nlohmann::json& j = read_json(file);
  try {
    if (j.is_object() && j.contains("benchmarks")) return machine_from_bench(j, "--machine " + file);
    if (j.is_object() && j.contains("machine") && j["machine"].is_object() && j["machine"].contains("gemm_flops")) {
      const auto& m = j["machine"];
      Link l{m.at("alpha_s").get<double>(), m.at("beta_s_per_B").get<double>(), m.value("gamma_s_per_B", 0.0)};
      MachineFigures mf = uniform(m.at("gemm_flops").get<double>(), l, "--machine " + file);
      if (m.contains("tp")) {
        const auto& t = m["tp"];
        mf.tp = uniform(mf.gemm_flops,
                        Link{t.at("alpha_s").get<double>(), t.at("beta_s_per_B").get<double>(),
                             t.value("gamma_s_per_B", 0.0)},
                        "--machine " + file)
                    .tp;
      }
      for (const auto& g : m.value("gemm_rates", nlohmann::json::array())) {
        const double r = g.at("flops").get<double>();
        if (!(r > 0) || !std::isfinite(r))
          throw InputError("--machine " + file + ": gemm_rates: a rate is not positive");
        GemmOps ops = GemmOps::nn;
        if (!parse_gemm_ops(g.value("ops", std::string("nn")), ops))
          throw InputError("--machine " + file + ": gemm_rates: ops must be nn, nt or tn");
        mf.gemm_rate[{g.at("M").get<int64_t>(), g.at("N").get<int64_t>(), g.at("K").get<int64_t>(), ops}] = r;
      }
      for (const auto& a : m.value("attention_seconds", nlohmann::json::array())) {
        const double f = a.at("forward_s").get<double>(), b = a.at("backward_s").get<double>();
        if (!(f > 0) || !(b > 0) || !std::isfinite(f) || !std::isfinite(b))
          throw InputError("--machine " + file + ": attention_seconds: a time is not positive");
        mf.attention_seconds[{a.at("b").get<int>(), a.at("s").get<int>(), a.at("heads").get<int>(),
                              a.at("d").get<int>()}] = {f, b};
      }
      const double bw = m.value("elementwise_bytes_per_s", 0.0);
      if (!(bw >= 0) || !std::isfinite(bw))
        throw InputError("--machine " + file + ": elementwise_bytes_per_s must be >= 0");
      mf.elementwise_bw = bw;
      const double obw = m.value("optimizer_bytes_per_s", 0.0);
      if (!(obw >= 0) || !std::isfinite(obw))
        throw InputError("--machine " + file + ": optimizer_bytes_per_s must be >= 0");
      mf.optimizer_bw = obw;
      return mf;
    }
  } catch (const nlohmann::json::exception& e) {
    const std::string where = input_error_from(e);
    throw InputError("--machine: " + (where.empty() ? file + ": " + e.what() : where));
  }
  throw InputError("--machine: " + file +
                   " holds no measured figures (give a results folder or its bench.json, a qualification folder, or a "
                   "plan's JSON; a qualify profile states thresholds only)");
}

nlohmann::json to_json(const MachineFigures& m) {
  nlohmann::json shapes = nlohmann::json::array();
  for (const auto& [k, r] : m.gemm_rate)
    shapes.push_back({{"M", std::get<0>(k)},
                      {"N", std::get<1>(k)},
                      {"K", std::get<2>(k)},
                      {"ops", to_string(std::get<3>(k))},
                      {"flops", r}});
  nlohmann::json attention = nlohmann::json::array();
  for (const auto& [k, t] : m.attention_seconds)
    attention.push_back({{"b", std::get<0>(k)},
                         {"s", std::get<1>(k)},
                         {"heads", std::get<2>(k)},
                         {"d", std::get<3>(k)},
                         {"forward_s", t.first},
                         {"backward_s", t.second}});
  return {{"gemm_flops", m.gemm_flops},
          {"gemm_rates", shapes},
          {"attention_seconds", attention},
          {"elementwise_bytes_per_s", m.elementwise_bw},
          {"optimizer_bytes_per_s", m.optimizer_bw},
          {"alpha_s", m.dp.alpha},
          {"beta_s_per_B", m.dp.beta},
          {"gamma_s_per_B", m.dp.gamma},
          {"tp", {{"alpha_s", m.tp.alpha}, {"beta_s_per_B", m.tp.beta}, {"gamma_s_per_B", m.tp.gamma}}}};
}

namespace {

std::string link_text(const Link& l) {
  char buf[160];
  char gamma[40] = "free";
  if (l.gamma > 0) std::snprintf(gamma, sizeof gamma, "%.4g GB/s", 1e-9 / l.gamma);
  std::snprintf(buf, sizeof buf, "alpha %.3g us, beta %.4g GB/s, gamma %s", l.alpha * 1e6, 1e-9 / l.beta, gamma);
  return buf;
}

}  // namespace

std::string describe(const MachineFigures& m) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "GEMM %.4g GFLOP/s", m.gemm_flops / 1e9);
  std::string s = buf;
  if (!m.gemm_rate.empty()) {
    double lo = INFINITY, hi = 0;
    for (const auto& kv : m.gemm_rate) lo = std::min(lo, kv.second), hi = std::max(hi, kv.second);
    std::snprintf(buf, sizeof buf, " (%zu shapes: %.4g..%.4g)", m.gemm_rate.size(), lo / 1e9, hi / 1e9);
    s += buf;
  }
  if (m.elementwise_bw > 0) {
    std::snprintf(buf, sizeof buf, ", element-wise %.4g GB/s", m.elementwise_bw / 1e9);
    s += buf;
  }
  if (m.optimizer_bw > 0) {
    std::snprintf(buf, sizeof buf, ", optimizer %.4g GB/s", m.optimizer_bw / 1e9);
    s += buf;
  }
  if (!m.attention_seconds.empty()) {
    std::snprintf(buf, sizeof buf, ", attention core at %zu shapes", m.attention_seconds.size());
    s += buf;
  }
  s += ", " + link_text(m.dp);
  if (m.tp.alpha != m.dp.alpha || m.tp.beta != m.dp.beta || m.tp.gamma != m.dp.gamma)
    s += "; tensor-parallel group: " + link_text(m.tp);
  return s;
}

}  // namespace sp::hybrid::plan
