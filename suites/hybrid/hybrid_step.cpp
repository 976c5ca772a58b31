// hybrid_step: one (or `steps`) training steps of a GPT-style transformer
// stack on dp x tp x pp ranks: tensor-parallel blocks, a pipeline schedule
// over the stages (GPipe, 1F1B, interleaved), ZeRO 0..3 over the
// data-parallel group, Adam, optional activation checkpointing
// (kernels/hybrid/step.hpp), in fp32, fp64, or fp16 / bf16 storage with fp32
// master weights and dynamic loss scaling. setup() initialises the model;
// each call continues its training. check() compares every parameter each
// rank holds after the first call: fp32 and fp64 with the single-rank
// reference (reference/hybrid/hybrid_ref.hpp) within its running error
// bound; fp16 and bf16 with the same step on one rank (one_rank_step.hpp),
// bit for bit: for tensor and data parallelism the one-rank step adds the
// split sums in the layout's order.
// Verdicts: memory per category at its peak, bytes and collectives per
// group, pipeline messages - each counted from the step's objects and
// transports against kernels/hybrid/cost_model.cpp, band [1, 1] on every
// rank; FLOP/s against the GEMM's rate; the schedule's bubble (reported).
// Counters elementwise_bytes_per_s, attention_forward_s,
// attention_backward_s and gemm_flops_<shape>: the layers' rates in a pass
// over a rank's blocks at the layout's micro-batch (block_pass_rates.hpp),
// and optimizer_bytes_per_s: the optimizer phase's kernels over this rank's
// elements (optimizer_rate.hpp), each the slowest rank's: the planner's
// calibration.
// Counters busy_s_per_step (in F and B operations, pipeline waits excluded)
// and optimizer_s_per_step (the phase after the schedule: ZeRO 0/1
// reductions, Adam, all-gathers), each the largest over ranks: the measured
// side of plan --verify's parts.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>

#include "kernels/hybrid/block_shape.hpp"
#include "kernels/hybrid/cost_model.hpp"
#include "kernels/hybrid/step.hpp"
#include "kernels/nn/gemm_rate.hpp"
#include "reference/hybrid/hybrid_ref.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/registry.hpp"
#include "suites/hybrid/block_pass_rates.hpp"
#include "suites/hybrid/hybrid_counts.hpp"
#include "suites/hybrid/hybrid_params.hpp"
#include "suites/hybrid/one_rank_step.hpp"
#include "suites/hybrid/optimizer_rate.hpp"

namespace {

using namespace sp::hybrid;

class HybridStepTechnique : public sp::nn::GemmRateTechnique {
 public:
  HybridStepTechnique() : GemmRateTechnique(describe()) {}

  static sp::Info describe() {
    sp::Info i;
    i.name = "hybrid_step";
    i.family = "hybrid";
    i.summary = "transformer training step on dp x tp x pp ranks: Megatron TP, pipeline schedules, ZeRO 0-3";
    auto set = [](const char* storage, int layers, int hidden, int heads, int seq, int batch, int tp, int pp, int v,
                  int mb, const char* sched, int zero, int ckpt, int steps) {
      return sp::Params{{"layers", std::to_string(layers)},
                        {"hidden", std::to_string(hidden)},
                        {"heads", std::to_string(heads)},
                        {"seq", std::to_string(seq)},
                        {"batch", std::to_string(batch)},
                        {"dp", "0"},
                        {"tp", std::to_string(tp)},
                        {"pp", std::to_string(pp)},
                        {"v", std::to_string(v)},
                        {"mb", std::to_string(mb)},
                        {"schedule", sched},
                        {"zero", std::to_string(zero)},
                        {"storage", storage},
                        {"ckpt", std::to_string(ckpt)},
                        {"steps", std::to_string(steps)}};
    };
    // Conformance: fp64 (in fp32 the running error bound through layer norms
    // and softmax outgrows the values within two blocks; docs/hybrid.md), dp
    // takes every rank (batch 12 and 24 divide over 1..4 replicas of 1 and 2 micro-batches); tensor and
    // pipeline splits are covered by suites/hybrid/tests at every
    // factorisation of 1..8 ranks. After 1 and after 3 steps.
    i.param_sets.push_back({sp::Size::conformance, set("fp64", 2, 8, 2, 4, 12, 1, 1, 1, 1, "1f1b", 0, 0, 1)});
    i.param_sets.push_back({sp::Size::conformance, set("fp64", 2, 8, 2, 4, 24, 1, 1, 1, 2, "gpipe", 3, 1, 3)});
    i.param_sets.push_back({sp::Size::small, set("fp32", 4, 128, 4, 64, 16, 1, 1, 1, 2, "1f1b", 1, 0, 1)});
    i.param_sets.push_back({sp::Size::medium, set("fp32", 4, 512, 8, 128, 16, 1, 1, 1, 2, "1f1b", 1, 0, 1)});
    i.param_rules = {{"dp", 0, 1 << 20}, {"zero", 0, 3}, {"ckpt", 0, 1 << 14}};
    // The step hands its buffers to MPI and the ring collectives directly.
    i.variants = {sp::Variant::kernel("kokkos", sp::MemoryNeed::host)};
    i.ranks = {1, 8, false};
    i.source = "MODELS.md Tensor parallelism, Pipeline parallelism, Data parallelism and ZeRO; docs/hybrid.md";
    i.headline = {"peak memory total", "fraction of GEMM rate"};
    return i;
  }

  void validate(const sp::Params& p, int nranks) const override {
    Technique::validate(p, nranks);
    const std::string e = case_error(p, nranks);
    if (!e.empty()) throw sp::InputError("hybrid_step: " + e);
  }

  sp::Counts counts(const sp::Params& p, int nranks) const override { return hybrid_counts(p, nranks); }

  void setup(const sp::Params& p, int nranks) override {
    params_ = p;
    model_ = model_of(p);
    layout_ = layout_of(p, nranks);
    s32_.reset(), s64_.reset(), s16_.reset(), sb16_.reset();
    const int rank = sp::comm::rank();
    switch (layout_.storage) {
      case StorageType::fp64: s64_ = std::make_unique<HybridStep<double>>(model_, layout_, rank); break;
      case StorageType::fp32: s32_ = std::make_unique<HybridStep<float>>(model_, layout_, rank); break;
      case StorageType::fp16: s16_ = std::make_unique<HybridStep<sp::precision::fp16_t>>(model_, layout_, rank); break;
      case StorageType::bf16: sb16_ = std::make_unique<HybridStep<sp::precision::bf16_t>>(model_, layout_, rank); break;
    }
    reference_.reset();
    gemm_at_.clear(), pass_.reset(), optimizer_rate_.reset();
    with([&](auto& st) { st.load(); });
  }

  // `steps` more steps of one training run that setup() started: a timed
  // call is training steps only, as in a training loop. check() follows a
  // single call after setup(), so its parameters are those `steps` steps
  // after the initial ones, which the references take.
  void run(const std::string&) override {
    with([&](auto& st) {
      st.start_counting();
      const int steps = int(params_.i("steps"));
      for (int s = 0; s < steps; ++s) st.step();
      last_ = st.counters();
    });
  }

  sp::CheckResult check(const std::string&) override {
    const int steps = int(params_.i("steps"));
    if (s16_ || sb16_) return check_16bit(steps);
    if (!reference_)
      reference_ =
          std::make_unique<ref::Model>(s64_ ? ref::train<double>(model_, steps) : ref::train<float>(model_, steps));
    sp::Comparator cmp(
        "running error bound (u of the storage type) through every operation, any order and split of every dot "
        "product, Adam's update capped at 2 lr R_t (reference/hybrid)");
    with([&](auto& st) {
      st.for_each_held([&](int layer, const ParamPos& pos, double v) {
        const ref::E& e = reference_->at({layer, pos.t})(int(pos.i), int(pos.j));
        cmp.add(v, double(e.v), double(e.e));
      });
    });
    return cmp.result();
  }

  // 16-bit storage: the fp32 master weights against the one-rank step's,
  // bitwise: the plain one-rank step where the layout keeps every sum's
  // terms and order (dp = tp = 1: pipeline splits, schedules, ZeRO,
  // checkpointing), else the one-rank step that adds the tensor-parallel
  // partial products and the data-parallel replicas' gradients in the
  // layout's ring order (docs/hybrid.md, "16-bit storage").
  sp::CheckResult check_16bit(int steps) {
    const Layout& l = layout_;
    sp::Comparator cmp(
        l.dp == 1 && l.tp == 1
            ? "bitwise: the one-rank step performs the same operations in the same order (pipeline splits, "
              "schedules, ZeRO, checkpointing only move or repeat them)"
            : "bitwise: the one-rank step forms the tensor-parallel partial products and the replicas' gradients "
              "as the ranks do and adds them in the ring's order (HybridStep::reproduce_order_of)");
    auto compare = [&](auto& st, const ParamValues& want) {
      st.for_each_master(
          [&](int layer, const ParamPos& pos, double v) { cmp.add(v, want.at(param_key(layer, pos)), 0); });
    };
    if (s16_) compare(*s16_, reference_masters<sp::precision::fp16_t>(model_, l, steps));
    if (sb16_) compare(*sb16_, reference_masters<sp::precision::bf16_t>(model_, l, steps));
    return cmp.result();
  }

  void report_counters(const std::string&, std::map<std::string, double>& out) override {
    const int rank = sp::comm::rank();
    const double steps = double(params_.i("steps"));
    const Counted c = counted(memory(), last_, steps);
    const Counted pr = predicted(model_, layout_, rank);
    for (size_t k = 0; k < c.names.size(); ++k) out[c.names[k]] = c.values[k];
    // Every rank compares its own counts with its own prediction; rank 0's
    // are the counters, the number of ranks where any differs is one more.
    long long bad = 0;
    for (size_t k = 0; k < c.values.size(); ++k) bad += c.values[k] != pr.values[k] ? 1 : 0;
    out["ranks_with_count_mismatch"] = double(sp::comm::sum(static_cast<long long>(bad > 0 ? 1 : 0)));
    out["busy_s_per_step"] = sp::comm::max(last_.busy_seconds / steps);
    out["optimizer_s_per_step"] = sp::comm::max(last_.optimizer_seconds / steps);
    if (gemm_at_.flops() == 0) {
      const auto shapes = gemm_shapes(model_, layout_, int(steps));
      if (s64_)
        gemm_at_.prepare<double>(shapes);
      else if (s16_)
        gemm_at_.prepare<sp::precision::fp16_t>(shapes);
      else if (sb16_)
        gemm_at_.prepare<sp::precision::bf16_t>(shapes);
      else
        gemm_at_.prepare<float>(shapes);
    }
    // The layers' rates in a pass over this rank's blocks at this layout's
    // micro-batch and tensor-parallel slice (the planner's calibration reads
    // them), each the slowest rank's: the step waits for the slowest. A
    // rank's F and B operations cycle through all its chunks' blocks, so
    // the pass chains them all: each block's weights are as far from the
    // caches as in the step.
    if (!pass_) {
      const BlockShape k = block_shape(model_, layout_);
      const Rows r{layout_.micro_batch_size(model_), model_.seq};
      const int chain = model_.layers / layout_.pp;
      BlockPassFigures f = s64_    ? block_pass_rates<double>(k, r, chain)
                           : s16_  ? block_pass_rates<sp::precision::fp16_t>(k, r, chain)
                           : sb16_ ? block_pass_rates<sp::precision::bf16_t>(k, r, chain)
                                   : block_pass_rates<float>(k, r, chain);
      for (auto& kv : f.gemm_rate) kv.second = sp::comm::min(kv.second);
      f.attention_forward_s = sp::comm::max(f.attention_forward_s);
      f.attention_backward_s = sp::comm::max(f.attention_backward_s);
      f.elementwise_bw = sp::comm::min(f.elementwise_bw);
      pass_ = std::make_unique<BlockPassFigures>(std::move(f));
    }
    out[kElementwiseRateCounter] = pass_->elementwise_bw;
    out[kAttentionForwardCounter] = pass_->attention_forward_s;
    out[kAttentionBackwardCounter] = pass_->attention_backward_s;
    for (const auto& [key, rate] : pass_->gemm_rate) out[pass_gemm_counter(key)] = rate;
    // The optimizer phase's kernels over this rank's elements (the same
    // calibration's other rate), once per setup on every rank: a collective
    // (a rank with nothing to update measures 0, the minimum then says no
    // rate).
    if (!optimizer_rate_) {
      const OptimizerElems e = optimizer_elems(model_, layout_, rank);
      const double r = s64_    ? optimizer_rate<double>(e)
                       : s16_  ? optimizer_rate<sp::precision::fp16_t>(e)
                       : sb16_ ? optimizer_rate<sp::precision::bf16_t>(e)
                               : optimizer_rate<float>(e);
      optimizer_rate_ = sp::comm::min(r);
    }
    out[kOptimizerRateCounter] = *optimizer_rate_;
  }

  void teardown() override {
    s32_.reset(), s64_.reset(), s16_.reset(), sb16_.reset(), reference_.reset();
    gemm_at_.clear();
  }

  void predict(const sp::Params& p, const std::string& variant, const sp::Measurement& m, const sp::Machine& machine,
               std::vector<sp::Verdict>& out) const override {
    const size_t first = out.size();
    Technique::predict(p, variant, m, machine, out);
    for (size_t i = first; i < out.size(); ++i) out[i].status = sp::Status::info;
    append_hybrid_verdicts(info_.name, p, variant, m, out);
    sp::nn::append_gemm_rate_verdict(info_, p, variant, counts(p, m.ranks).flops, m, true, out);
  }

 private:
  template <class F>
  void with(F&& f) {
    if (s64_) f(*s64_);
    if (s32_) f(*s32_);
    if (s16_) f(*s16_);
    if (sb16_) f(*sb16_);
  }
  const MemoryTracker& memory() {
    const MemoryTracker* m = nullptr;
    with([&](auto& st) { m = &st.memory(); });
    return *m;
  }

  sp::Params params_;
  ModelShape model_;
  Layout layout_;
  std::unique_ptr<HybridStep<float>> s32_;
  std::unique_ptr<HybridStep<double>> s64_;
  std::unique_ptr<HybridStep<sp::precision::fp16_t>> s16_;
  std::unique_ptr<HybridStep<sp::precision::bf16_t>> sb16_;
  std::unique_ptr<ref::Model> reference_;
  StepCounters last_;
  std::unique_ptr<BlockPassFigures> pass_;
  std::optional<double> optimizer_rate_;
};

SP_REGISTER_TECHNIQUE(HybridStepTechnique);

}  // namespace
