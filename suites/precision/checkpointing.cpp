// Activation checkpointing (Chen et al. 2016; docs/precision.md "Activation
// checkpointing"): n blocks of s sublayers trained with every activation kept
// and with a checkpoint every k blocks plus recomputation in backward.
// Checked: weight gradients bitwise identical to the kept-all run. Predicted
// and judged from the benchmark: buffers stored after forward (24
// blocks x 5 = 120 -> 24), peak live buffers (n/k + k s form, minimum near
// k = sqrt(n/s)), and the time cost of recomputing one forward pass.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "kernels/nn/gemm_rate.hpp"
#include "kernels/precision/block_stack.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/registry.hpp"

namespace {

using namespace sp::precision;

// Predicted activation buffers (each batch x width fp32), from the schedule
// alone: stored after forward, and the peak over forward and backward.
struct MemoryModel {
  long long stored = 0, peak = 0, recomputed_layers = 0;
};
MemoryModel predict_memory(long long n, long long s, long long k /*0 = keep all*/) {
  const long long L = n * s, seg = k == 0 ? L : k * s, S = (L + seg - 1) / seg;
  MemoryModel m;
  if (k == 0) return {L, L + 1, 0};
  m.stored = S;
  // Forward at layer l: checkpoints so far + the running input (if not a checkpoint) + the output.
  for (long long l = 0; l < L; ++l) m.peak = std::max(m.peak, l / seg + 1 + (l % seg != 0) + 1);
  // Backward of segment j: checkpoints 0..j, its len_j - 1 recomputed inputs, its output.
  for (long long j = 0; j < S; ++j) {
    const long long len = std::min(seg, L - j * seg);
    m.peak = std::max(m.peak, j + 1 + len);
    m.recomputed_layers += len - 1;
  }
  return m;
}

class Checkpointing : public sp::Technique {
 public:
  Checkpointing() : Technique(describe()) {}

  static sp::Info describe() {
    sp::Info i;
    i.name = "checkpointing";
    i.family = "precision";
    i.headline = {"peak live activations"};
    i.summary = "n blocks x s sublayers: keep all activations vs checkpoint every k blocks";
    auto set = [](int n, int s, int k, int b, int w) {
      return sp::Params{{"n", std::to_string(n)},
                        {"s", std::to_string(s)},
                        {"k", std::to_string(k)},
                        {"B", std::to_string(b)},
                        {"W", std::to_string(w)}};
    };
    for (auto [n, s, k] : {std::tuple{4, 2, 1}, {5, 1, 2}, {3, 2, 3}})
      i.param_sets.push_back({sp::Size::conformance, set(n, s, k, 4, 8)});
    // 24 layers x 5 linear inputs (a transformer's), and s = 1 stacks around k = sqrt(n).
    for (int k : {1, 2, 3, 4, 6, 12, 24}) i.param_sets.push_back({sp::Size::small, set(24, 5, k, 32, 64)});
    for (int k : {1, 2, 4, 8, 16}) i.param_sets.push_back({sp::Size::small, set(16, 1, k, 64, 128)});
    for (int k : {1, 2, 3, 6}) i.param_sets.push_back({sp::Size::medium, set(24, 5, k, 128, 256)});
    for (int k : {1, 3}) i.param_sets.push_back({sp::Size::large, set(24, 5, k, 512, 512)});
    i.variants = {sp::Variant::strategy("checkpoint"), sp::Variant::strategy("keep_all")};
    i.tol.roof_min = 0.0;         // small strided GEMMs: roofline reported, not judged
    i.tol.prediction_rel = 0.25;  // time model; timings on a shared machine are noisy
    i.source = "docs/precision.md Activation checkpointing (Chen et al. 2016)";
    return i;
  }

  void validate(const sp::Params& p, int nranks) const override {
    Technique::validate(p, nranks);
    if (p.i("k") > p.i("n"))
      throw sp::InputError("checkpointing: k=" + p.s("k") + " exceeds the number of blocks n=" + p.s("n"));
    if (p.i("n") * p.i("s") > 4096) throw sp::InputError("checkpointing: n*s above 4096 layers is not supported");
  }

  sp::Counts counts(const sp::Params& p, int) const override {
    const double L = double(p.i("n")) * p.i("s"), B = p.i("B"), W = p.i("W");
    sp::Counts c;
    c.flops = 0;  // forward + two backward GEMMs per layer (variant-independent part)
    for (const auto& g : gemm_shapes(p)) c.flops += g.flops();
    c.bytes_read = L * (W * W * 4 * 2 + B * W * 4 * 4);
    c.bytes_written = L * (W * W * 4 + B * W * 4 * 3);
    c.dtype = "fp32";
    return c;
  }

  void setup(const sp::Params& p, int) override {
    params_ = p;
    gemm_at_.clear();
    sh_ = {int(p.i("n")), int(p.i("s")), int(p.i("B")), int(p.i("W"))};
    k_ = int(p.i("k"));
    uint64_t st = 777;
    auto uni = [&st] {
      st = st * 6364136223846793005ULL + 1442695040888963407ULL;
      return float(double(st >> 11) * 0x1p-53 * 2 - 1);
    };
    // Weights scaled so activations neither vanish nor explode through 120 ReLU layers.
    const float ws = std::sqrt(6.0f / float(sh_.width));
    std::vector<float> w(size_t(sh_.layers()) * sh_.width * sh_.width), x(size_t(sh_.batch) * sh_.width), d(x.size());
    for (auto& v : w) v = uni() * ws;
    for (auto& v : x) v = uni();
    for (auto& v : d) v = uni();
    stack_ = std::make_unique<BlockStack>(sh_, w, x, d);
  }

  void run(const std::string& variant) override { stack_->train_step(variant == "keep_all" ? 0 : k_); }

  sp::CheckResult check(const std::string& variant) override {
    // Copy this variant's gradients, run the other schedule, compare bit for bit.
    std::vector<std::vector<float>> mine;
    for (auto& g : stack_->grads()) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g);
      mine.emplace_back(h.data(), h.data() + h.extent(0));
    }
    stack_->train_step(variant == "keep_all" ? k_ : 0);
    sp::Comparator cmp("weight gradients bitwise equal to the other schedule's (recomputation is deterministic)");
    long long nonzero = 0;
    for (size_t l = 0; l < mine.size(); ++l) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), stack_->grads()[l]);
      for (size_t i = 0; i < mine[l].size(); ++i) {
        nonzero += mine[l][i] != 0;
        cmp.add(std::memcmp(&mine[l][i], &h(i), sizeof(float)) == 0 ? 0 : 1, 0, 0);
      }
    }
    auto r = cmp.result();
    // All-zero gradients would make the comparison vacuous (dead ReLUs).
    if (nonzero == 0) r.wrong += 1, r.note = "all gradients are zero";
    stack_->train_step(variant == "keep_all" ? 0 : k_);  // leave this variant's state
    return r;
  }

  void report_counters(const std::string& variant, std::map<std::string, double>& out) override {
    const bool keep = variant == "keep_all";
    stack_->train_step(keep ? 0 : k_);
    out["stored_buffers"] = double(stack_->stored_after_forward());
    out["peak_buffers"] = double(stack_->peak_buffers());
    out["peak_activation_bytes"] = double(stack_->peak_buffers()) * stack_->bytes_per_buffer();
    if (gemm_at_.flops() == 0) gemm_at_.prepare<float>(gemm_shapes(params_));
  }

  // Times for the recomputation model, one call of each in turn (keep-all,
  // this variant's schedule, forward-only) so that load drifting on a shared
  // machine hits all three alike; medians of 7.
  std::vector<sp::Probe> probes(const std::string& variant) const override {
    sp::Probe p{"", {"keep_all", variant == "keep_all" ? "keep_all" : "schedule", "forward"}};
    p.samples = 7;
    p.each = {"t_keep_all", "t_schedule", "t_forward"};
    auto out = sp::nn::gemm_rate_probes(variant == "keep_all" ? "keep_all" : "schedule");
    out.insert(out.begin(), p);
    return out;
  }

  void run_probe(const std::string& call) override {
    if (call == sp::nn::kGemmCall)
      gemm_at_.run();
    else if (call == "keep_all")
      stack_->train_step(0);
    else if (call == "schedule")
      stack_->train_step(k_);
    else
      stack_->forward_only();
  }

  void probes_done(const std::string&, std::map<std::string, double>& out) override {
    sp::nn::gemm_rate_counters(gemm_at_, out);
  }

  void predict(const sp::Params& p, const std::string& variant, const sp::Measurement& m, const sp::Machine& machine,
               std::vector<sp::Verdict>& out) const override {
    Technique::predict(p, variant, m, machine, out);
    // Judged for keep-all; checkpointing's recomputation is extra work the count leaves out.
    sp::nn::append_gemm_rate_verdict(info_, p, variant, counts(p, m.ranks).flops, m, variant == "keep_all", out);
    if (!m.counters.count("peak_buffers")) return;
    const bool keep = variant == "keep_all";
    const auto mm = predict_memory(p.i("n"), p.i("s"), keep ? 0 : p.i("k"));
    auto exact = [&](const char* what, double pred, double meas, const std::string& note) {
      out.push_back(sp::exact_verdict(info_.name, variant, p, what, "buffers", pred, meas, note));
    };
    char buf[160];
    std::snprintf(buf, sizeof buf, "%.0f KiB per buffer: n*s -> n/k",
                  m.counters.at("peak_activation_bytes") / std::max(1.0, m.counters.at("peak_buffers")) / 1024);
    exact("activations stored after forward", double(mm.stored), m.counters.at("stored_buffers"), buf);
    exact("peak live activations", double(mm.peak), m.counters.at("peak_buffers"),
          keep ? "n*s + 1" : "max_j (j + 1 + len_j): checkpoints + one segment recomputed");
    if (keep) return;
    // Time: keep-all step + recomputing (L - S)/L of one forward pass.
    const double L = double(p.i("n")) * p.i("s");
    const double pred = m.counters.at("t_keep_all") + m.counters.at("t_forward") * double(mm.recomputed_layers) / L;
    sp::Verdict v{info_.name, variant, p.label(), "step time with recomputation", "s"};
    const double t = m.counters.at("t_schedule");  // timed interleaved with the model's inputs
    v.predicted = pred, v.measured = t, v.ratio = t / pred;
    v.band_lo = 1 - info_.tol.prediction_rel, v.band_hi = 1 + info_.tol.prediction_rel;
    v.judge();
    std::snprintf(buf, sizeof buf, "keep-all %.3g s + %.0f/%.0f of a %.3g s forward; extra measured %.1f%%",
                  m.counters.at("t_keep_all"), double(mm.recomputed_layers), L, m.counters.at("t_forward"),
                  100 * (t / m.counters.at("t_keep_all") - 1));
    v.note = buf;
    out.push_back(v);
  }

 private:
  // Per layer: x W (B x W x W), dW = x^T dz (W x W x B), dx = dz W^T (B x W x W).
  static std::vector<sp::nn::GemmShape> gemm_shapes(const sp::Params& p) {
    const int B = int(p.i("B")), W = int(p.i("W"));
    const double L = double(p.i("n")) * p.i("s");
    return {{B, W, W, L}, {W, W, B, L}, {B, W, W, L}};
  }

  sp::Params params_;
  sp::nn::GemmAtShapes gemm_at_;  // this call's products, timed in turn with it
  StackShape sh_{};
  int k_ = 1;
  std::unique_ptr<BlockStack> stack_;
};

SP_REGISTER_TECHNIQUE(Checkpointing);

}  // namespace
