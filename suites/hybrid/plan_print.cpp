// Tables and JSON of the planner; see plan_print.hpp.
#include "suites/hybrid/plan_print.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "kernels/hybrid/megatron.hpp"
#include "kernels/hybrid/presets.hpp"
#include "suites/hybrid/plan_machine.hpp"

namespace sp::hybrid::plan {

namespace {

constexpr double kGiB = 1073741824.0;

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

std::string model_line(const ModelShape& m) {
  return fmt("L=%d h=%d a=%d s=%d ffn=%d V=%d B=%d, %.4g parameters", m.layers, m.hidden, m.heads, m.seq, m.ffn_width(),
             m.vocab, m.global_batch, megatron::param_count(m));
}

nlohmann::json model_json(const ModelShape& m) {
  return {{"layers", m.layers},
          {"hidden", m.hidden},
          {"heads", m.heads},
          {"seq", m.seq},
          {"ffn", m.ffn_width()},
          {"vocab", m.vocab},
          {"global_batch", m.global_batch},
          {"params", megatron::param_count(m)}};
}

nlohmann::json candidate_json(const Candidate& c) {
  return {{"layout", to_json(c.layout)},
          {"memory_bytes",
           {{"params", c.memory.params},
            {"grads", c.memory.grads},
            {"optimizer", c.memory.optimizer},
            {"activations", c.memory.activations},
            {"total", c.memory.total()}}},
          {"time_s",
           {{"compute", c.time.compute},
            {"gemm", c.time.gemm},
            {"elementwise", c.time.elementwise},
            {"attention", c.time.attention},
            {"optimizer", c.time.optimizer},
            {"tp", c.time.tp},
            {"pp", c.time.pp},
            {"dp", c.time.dp},
            {"bubble", c.time.bubble},
            {"total", c.time.total}}},
          {"bubble_fraction", c.time.bubble_fraction},
          {"comm_share", c.time.comm_share()}};
}

// The best-ranked layout with the preset's published t and p on its GPU
// count: its place (0-based), or -1 when none fits or the counts differ.
int published_place(const Request& r, const Plan& p, const std::string& preset) {
  const Preset* pr = preset.empty() ? nullptr : find_preset(preset);
  if (!pr || pr->gpus != r.ranks || pr->gpus < 2) return -1;
  for (size_t i = 0; i < p.ranked.size(); ++i)
    if (p.ranked[i].layout.tp == pr->tp && p.ranked[i].layout.pp == pr->pp) return static_cast<int>(i);
  return -1;
}

}  // namespace

nlohmann::json to_json(const Layout& l) {
  return {{"dp", l.dp},
          {"tp", l.tp},
          {"pp", l.pp},
          {"v", l.v},
          {"micro_batches", l.micro_batches},
          {"schedule", mp::to_string(l.schedule)},
          {"zero_stage", l.zero_stage},
          {"storage", to_string(l.storage)},
          {"ckpt_every", l.ckpt_every}};
}

std::string plan_table(const Request& r, const Plan& p, int top, const std::string& preset) {
  std::string s = fmt("plan: %s%s on %d ranks x %.4g GiB, %s storage\n", preset.empty() ? "" : (preset + ": ").c_str(),
                      model_line(r.model).c_str(), r.ranks, r.memory_bytes / kGiB, to_string(r.storage));
  s += "machine: " + describe(r.machine) + "\n";
  s += fmt("%lld layouts enumerated, %zu valid and fitting, ranked by predicted step time\n", p.enumerated,
           p.ranked.size());
  if (!p.ranked.empty()) {
    s += fmt("%4s  %-50s %12s %14s %8s %8s\n", "#", "layout", "mem/rank GiB", "step time s", "bubble", "comm");
    const int n = std::min<int>(top, static_cast<int>(p.ranked.size()));
    for (int i = 0; i < n; ++i) {
      const Candidate& c = p.ranked[i];
      s += fmt("%4d  %-50s %12.2f %14.5g %7.1f%% %7.1f%%\n", i + 1, describe(c.layout).c_str(), c.memory.total() / kGiB,
               c.time.total, 100 * c.time.bubble_fraction, 100 * c.time.comm_share());
    }
  } else {
    s += "no layout fits\n";
  }
  if (const Preset* pr = preset.empty() ? nullptr : find_preset(preset); pr && pr->gpus == r.ranks && pr->gpus > 1) {
    const int at = published_place(r, p, preset);
    if (at < 0)
      s += fmt("published layout t=%d p=%d: none of its layouts fits\n", pr->tp, pr->pp);
    else
      s += fmt("published layout t=%d p=%d: best at #%d, %s, %.2f GiB, %.5g s\n", pr->tp, pr->pp, at + 1,
               describe(p.ranked[at].layout).c_str(), p.ranked[at].memory.total() / kGiB, p.ranked[at].time.total);
  }
  if (!p.rejected.empty()) {
    s += "rejected layouts, per reason:\n";
    for (auto& [why, n] : p.rejected) {
      s += fmt("%10lld  %s", n, why.c_str());
      if (p.smallest_rejected_memory > 0 && why.rfind("memory:", 0) == 0)
        s += fmt(" (the smallest of them needs %.2f GiB)", p.smallest_rejected_memory / kGiB);
      s += "\n";
    }
  }
  return s;
}

nlohmann::json plan_json(const Request& r, const Plan& p, int top, const std::string& preset) {
  nlohmann::json ranked = nlohmann::json::array(), rejected = nlohmann::json::array();
  const int n = std::min<int>(top, static_cast<int>(p.ranked.size()));
  for (int i = 0; i < n; ++i) ranked.push_back(candidate_json(p.ranked[i]));
  for (auto& [why, c] : p.rejected) rejected.push_back({{"reason", why}, {"count", c}});
  return {{"request",
           {{"preset", preset},
            {"model", model_json(r.model)},
            {"ranks", r.ranks},
            {"memory_bytes_per_rank", r.memory_bytes},
            {"storage", to_string(r.storage)}}},
          {"machine", to_json(r.machine)},
          {"enumerated", p.enumerated},
          {"fitting", p.ranked.size()},
          {"ranked", ranked},
          {"rejected", rejected},
          {"smallest_rejected_memory_bytes", p.smallest_rejected_memory},
          {"published_layout_place", published_place(r, p, preset) + 1}};  // 1-based; 0: none
}

std::string verify_table(const VerifyResult& v) {
  std::string s = "plan --verify: " + model_line(v.model) + "\n";
  s += "machine measured on these ranks: " + describe(v.machine) + "\n";
  // The predicted step's parts (time_model.hpp): GEMMs, element-wise
  // passes, the attention core, communication of every group, the
  // optimizer phase's kernels, the pipeline's bubble; then the step's own
  // measured parts: seconds in F and B operations (pipeline waits excluded)
  // and in the phase after the schedule (ZeRO 0/1 reductions, Adam,
  // all-gathers, the wait for the slowest rank), "-" where the step does not
  // report them.
  s +=
      fmt("%6s  %-50s %12s %12s %8s   %9s %9s %9s %9s %9s %9s   %9s %9s\n", "place", "layout", "predicted s",
          "measured s", "error", "gemm s", "elem s", "attn s", "comm s", "optim s", "bubble s", "meas F+B", "meas opt");
  auto part = [](double x) { return x >= 0 ? fmt("%9.4f", x) : fmt("%9s", "-"); };
  for (const VerifyRow& r : v.rows) {
    const StepTime& t = r.planned.time;
    const double e = r.measured > 0 ? (t.total - r.measured) / r.measured : NAN;
    s += fmt("%6d  %-50s %12.5g %12.5g %+7.1f%%   %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f   %s %s\n", r.position + 1,
             describe(r.planned.layout).c_str(), t.total, r.measured, 100 * e, t.gemm, t.elementwise, t.attention,
             t.tp + t.pp + t.dp, t.optimizer, t.bubble, part(r.measured_busy).c_str(),
             part(r.measured_optimizer).c_str());
  }
  for (const std::string& why : v.refused) s += "refused by the step, not run: " + why + "\n";
  s += fmt("mean absolute error %.1f%% (band <= %.0f%%): %s\n", 100 * v.mae, 100 * kMaxMeanAbsError,
           v.mae_pass ? "PASS" : "FAIL");
  s += fmt("Spearman rank correlation %.3f (band >= %.2f): %s\n", v.rho, kMinSpearman, v.rho_pass ? "PASS" : "FAIL");
  return s;
}

nlohmann::json verify_json(const VerifyResult& v) {
  nlohmann::json rows = nlohmann::json::array();
  for (const VerifyRow& r : v.rows) {
    auto j = candidate_json(r.planned);
    j["place"] = r.position + 1;
    j["measured_s"] = r.measured;
    j["measured_busy_s"] = r.measured_busy >= 0 ? nlohmann::json(r.measured_busy) : nlohmann::json();
    j["measured_optimizer_s"] = r.measured_optimizer >= 0 ? nlohmann::json(r.measured_optimizer) : nlohmann::json();
    rows.push_back(j);
  }
  auto num = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); };
  return {{"model", model_json(v.model)},
          {"machine", to_json(v.machine)},
          {"rows", rows},
          {"refused", v.refused},
          {"verdicts",
           {{{"quantity", "mean absolute error of step time"},
             {"value", num(v.mae)},
             {"band_hi", kMaxMeanAbsError},
             {"status", v.mae_pass ? "PASS" : "FAIL"}},
            {{"quantity", "Spearman rank correlation"},
             {"value", num(v.rho)},
             {"band_lo", kMinSpearman},
             {"status", v.rho_pass ? "PASS" : "FAIL"}}}}};
}

}  // namespace sp::hybrid::plan
