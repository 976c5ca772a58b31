// Pipeline parallelism over all ranks of the run (p = ranks): GPipe, 1F1B
// (PipeDream-Flush) and the interleaved virtual pipeline, one training step
// per call. Conformance: outputs, input gradients and accumulated weight
// gradients vs the sequential run of the same kernels (bitwise) and vs the
// plain-loop reference (bounded). Verdicts (docs/modelparallel.md "Pipeline
// parallelism"): bubble fraction measured (idle / step time, mean over
// ranks) vs (p-1)/(m+p-1) or (p-1)/(v m+p-1); peak activation sets per stage
// vs m, p - i, Megatron's interleaved warm-up; p2p messages and bytes per
// rank and the v-fold increase; parameters per rank.
#include <cmath>
#include <cstdio>
#include <thread>

#include "kernels/nn/gemm_rate.hpp"
#include "kernels/comm/transport.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/registry.hpp"
#include "suites/modelparallel/mp_data.hpp"
#include "suites/modelparallel/pipeline_run.hpp"

namespace {

using sp::mp::ScheduleKind;

sp::Params pipe_params(int m, int v, int L, int h, int b) {
  return sp::Params{{"m", std::to_string(m)},
                    {"v", std::to_string(v)},
                    {"L", std::to_string(L)},
                    {"h", std::to_string(h)},
                    {"b", std::to_string(b)}};
}

// Declared band for measured / predicted bubble: the formulas ignore
// point-to-point latency and per-operation overheads, which only add idle
// time, so the measurement may exceed the prediction by up to half; below
// 0.8 x the timing itself would be broken.
constexpr double kBubbleLo = 0.8, kBubbleHi = 1.5;

class Pipeline : public sp::nn::GemmRateTechnique {
 public:
  explicit Pipeline(ScheduleKind k) : GemmRateTechnique(describe(k)), kind_(k) {}

  static sp::Info describe(ScheduleKind k) {
    sp::Info i;
    i.name = "pipeline_" + sp::mp::to_string(k);
    i.family = "modelparallel";
    i.summary = sp::mp::to_string(k) + " pipeline schedule, one training step, p = ranks (fp64)";
    const bool il = k == ScheduleKind::interleaved;
    // Conformance shapes valid at p = 1..4: interleaved needs m % p == 0 (m = 12) and L >= p v.
    if (il) {
      i.param_sets.push_back({sp::Size::conformance, pipe_params(12, 2, 8, 16, 4)});
      i.param_sets.push_back({sp::Size::conformance, pipe_params(12, 3, 13, 8, 3)});
    } else {
      i.param_sets.push_back({sp::Size::conformance, pipe_params(4, 1, 8, 16, 4)});
      i.param_sets.push_back({sp::Size::conformance, pipe_params(3, 1, 5, 8, 3)});
    }
    for (int m : {4, 8, 16}) i.param_sets.push_back({sp::Size::small, pipe_params(m, il ? 2 : 1, 8, 512, 64)});
    for (int m : {8, 32}) i.param_sets.push_back({sp::Size::medium, pipe_params(m, il ? 2 : 1, 16, 512, 128)});
    i.variants = {sp::Variant::kernel("kokkos")};
    i.ranks = {1, 64, false};
    i.headline = {"bubble fraction (idle / step, mean over ranks)"};
    i.source =
        "docs/modelparallel.md Pipeline parallelism; Huang et al. 2019; Narayanan et al. SC'21; Megatron-LM "
        "schedules.py";
    return i;
  }

  void validate(const sp::Params& p, int nranks) const override {
    Technique::validate(p, nranks);
    sp::mp::PipeConfig::from(kind_, p, nranks).validate();
  }

  sp::Counts counts(const sp::Params& p, int nranks) const override {
    const auto c = sp::mp::PipeConfig::from(kind_, p, nranks);
    sp::Counts k;
    // forward 2 rows h^2 per layer, backward twice that; the model's layers are split over the ranks.
    k.flops = 6.0 * c.rows * c.h * double(c.h) * c.layers * c.m / nranks;
    // Compulsory traffic, roughly: the rank's weights read and gradients
    // written, and per micro-batch its input, output and their gradients.
    k.bytes_read = 8.0 * (double(c.h) * c.h * c.layers / nranks + 2.0 * c.m * c.act_elems());
    k.bytes_written = k.bytes_read;
    return k;
  }

  // The products of one call on each of p ranks: per micro-batch and layer
  // of the rank, z = x W, dW += x^T dz and dx = dz W^T (rows x h x h each).
  static std::vector<sp::nn::GemmShape> gemm_shapes(const sp::mp::PipeConfig& c, int p) {
    const double per_rank = double(c.layers) * c.m / p;
    return {{c.rows, c.h, c.h, per_rank}, {c.h, c.h, c.rows, per_rank}, {c.rows, c.h, c.h, per_rank}};
  }

  void setup(const sp::Params& p, int nranks) override {
    gemm_at_.clear();
    transport_ = sp::comm::make_world_transport();
    run_.setup(*transport_, sp::mp::PipeConfig::from(kind_, p, nranks));
    busy_ = step_ = 0;
  }

  void run(const std::string&) override {
    sp::comm::barrier();  // a common start, so that idle time is measured from it
    const auto st = run_.step();
    busy_ += st.busy;
    step_ += st.step;
  }

  sp::CheckResult check(const std::string&) override { return sp::mp::pipe_check(run_, transport_->rank()); }

  void report_counters(const std::string&, std::map<std::string, double>& out) override {
    const int p = transport_->size(), me = transport_->rank();
    const auto& st = run_.last;
    const double step = sp::comm::max(step_);
    auto per_rank = [&](const std::string& name, double mine) {
      for (int i = 0; i < p; ++i) out[name + "_r" + std::to_string(i)] = sp::comm::sum(i == me ? mine : 0.0);
    };
    per_rank("bubble", step > 0 ? 1 - busy_ / step : 0);
    per_rank("peak_stash", st.peak_stash);
    per_rank("peak_stash_elems", static_cast<double>(st.peak_stash_elems));
    per_rank("msgs_sent", static_cast<double>(st.messages_sent));
    per_rank("bytes_sent", static_cast<double>(st.bytes_sent));
    per_rank("param_elems", static_cast<double>(run_.ex->param_elems()));
    out["bubble_mean"] = sp::comm::sum(step > 0 ? 1 - busy_ / step : 0) / p;
    out["bubble_replay"] = sp::comm::sum(sp::mp::replay_bubble(*transport_, run_));  // known on rank 0 only
    if (gemm_at_.flops() == 0) gemm_at_.prepare<double>(gemm_shapes(run_.cfg, transport_->size()));
    sp::mp::drop_zeros(out);  // see mp_data.hpp
  }

  void predict(const sp::Params& params, const std::string& variant, const sp::Measurement& meas, const sp::Machine&,
               std::vector<sp::Verdict>& out) const override;

  void teardown() override {
    run_ = {};
    transport_.reset();
  }

 private:
  ScheduleKind kind_;
  std::unique_ptr<sp::comm::Transport> transport_;
  sp::mp::PipeRun run_;
  double busy_ = 0, step_ = 0;
};

void Pipeline::predict(const sp::Params& params, const std::string& variant, const sp::Measurement& meas,
                       const sp::Machine&, std::vector<sp::Verdict>& out) const {
  const int p = meas.ranks;
  const auto c = sp::mp::PipeConfig::from(kind_, params, p);
  auto counter = [&](const std::string& n) { return sp::mp::counter_or_zero(meas, n); };
  const std::string ps = "p=" + std::to_string(p);
  sp::nn::append_gemm_rate_verdict(info_, params, variant, counts(params, p).flops, meas, true, out);

  // Bubble: judged only when each rank has a core of its own and the formula's assumptions hold.
  const bool oversubscribed = p * meas.threads > static_cast<int>(std::thread::hardware_concurrency());
  const bool degenerate = kind_ == ScheduleKind::interleaved && c.m == p && p > 1;
  sp::Verdict b{info_.name, variant, params.label(), "bubble fraction (idle / step, mean over ranks)", "fraction"};
  b.predicted = sp::mp::predicted_bubble(kind_, p, c.m, c.v);
  b.measured = counter("bubble_mean");
  b.ratio = b.predicted > 0 ? b.measured / b.predicted : 0;
  b.band_lo = kBubbleLo, b.band_hi = kBubbleHi;
  const bool judged = p > 1 && !oversubscribed && !degenerate;
  b.judge(judged);
  b.note = ps + (oversubscribed ? "; oversubscribed: not judged" : "") +
           (degenerate ? "; m == p: Megatron runs every forward first, formula not applicable" : "") +
           (p == 1 ? "; one stage has no bubble" : "");
  out.push_back(b);

  // Diagnosis, not judged: the last step replayed by the validator with its
  // measured operation durations and instant messages. Formula -> replay is
  // what uneven compute times explain; replay -> measured is waiting on
  // messages and for the CPU.
  sp::Verdict rb{info_.name, variant, params.label(), "bubble replayed from measured op durations", "fraction"};
  rb.predicted = b.predicted;
  rb.measured = counter("bubble_replay");
  rb.ratio = rb.predicted > 0 ? rb.measured / rb.predicted : 0;
  rb.band_lo = kBubbleLo, rb.band_hi = kBubbleHi;
  rb.status = sp::Status::info;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s; measured %.4f: the rest is waiting on messages and for the CPU", ps.c_str(),
                b.measured);
  rb.note = buf;
  out.push_back(rb);

  long long total_msgs = 0;
  const bool uniform = c.layers % (p * c.v) == 0;
  for (int i = 0; i < p; ++i) {
    const std::string r = "_r" + std::to_string(i), rs = ps + ", rank " + std::to_string(i);
    const int peak = sp::mp::predicted_peak_stash(kind_, p, c.m, c.v, i);
    out.push_back(sp::exact_verdict(info_.name, variant, params, "peak activation sets, rank " + std::to_string(i),
                                    "(mb,chunk)", peak, counter("peak_stash" + r),
                                    rs + (kind_ == ScheduleKind::gpipe         ? "; GPipe: m"
                                          : kind_ == ScheduleKind::one_f_one_b ? "; 1F1B: min(p-i, m)"
                                                                               : "; min(2(p-i-1)+(v-1)p+1, mv)")));
    if (uniform)
      out.push_back(sp::exact_verdict(info_.name, variant, params,
                                      "peak activation elements, rank " + std::to_string(i), "elements",
                                      peak * 2.0 * (c.layers / (p * c.v)) * c.act_elems(),
                                      counter("peak_stash_elems" + r), rs + "; sets x layers/chunk x (x, z)"));
    const long long msgs = sp::mp::predicted_messages_sent(p, c.m, c.v, i);
    total_msgs += msgs;
    out.push_back(sp::exact_verdict(info_.name, variant, params, "p2p messages sent, rank " + std::to_string(i), "msgs",
                                    msgs, counter("msgs_sent" + r), rs));
    out.push_back(sp::exact_verdict(info_.name, variant, params, "p2p bytes sent, rank " + std::to_string(i), "B",
                                    msgs * 8.0 * c.act_elems(), counter("bytes_sent" + r), rs + "; b h x 8 B each"));
    double params_i = 0;
    for (int ch = i; ch < p * c.v; ch += p) params_i += sp::mp::chunk_layers(c.layers, p * c.v, ch).count;
    out.push_back(sp::exact_verdict(info_.name, variant, params, "parameters, rank " + std::to_string(i), "elements",
                                    params_i * c.h * c.h, counter("param_elems" + r), rs + "; its layers x h^2"));
  }
  if (p > 1) {
    // v-fold communication: all messages relative to the plain pipeline's 2 m (p-1).
    double measured = 0;
    for (int i = 0; i < p; ++i) measured += counter("msgs_sent_r" + std::to_string(i));
    out.push_back(sp::exact_verdict(info_.name, variant, params, "p2p messages vs v=1 pipeline", "x",
                                    (p * c.v - 1.0) / (p - 1), measured / (2.0 * c.m * (p - 1)),
                                    ps + "; (pv-1)/(p-1), about v"));
  }
  if (kind_ == ScheduleKind::interleaved && c.m * c.v > 2 * (p - 1) + (c.v - 1) * p && c.m != p) {
    // docs/modelparallel.md: interleaving holds 1 + (p-1)/(p v) times 1F1B's activations (rank 0: p stages' worth).
    out.push_back(sp::exact_verdict(info_.name, variant, params, "rank 0 activations in 1F1B stage units", "stages",
                                    p * (1 + (p - 1.0) / (p * c.v)), counter("peak_stash_r0") / c.v,
                                    ps + "; p (1 + (p-1)/(p v))"));
  }
}

SP_REGISTER_TECHNIQUE(Pipeline, ScheduleKind::gpipe);
SP_REGISTER_TECHNIQUE(Pipeline, ScheduleKind::one_f_one_b);
SP_REGISTER_TECHNIQUE(Pipeline, ScheduleKind::interleaved);

}  // namespace
