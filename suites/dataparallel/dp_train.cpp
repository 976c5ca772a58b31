// dp_train: data-parallel training of a real MLP (GeLU, MSE loss, Adam) over
// p ranks with the strategies of kernels/dataparallel/dp_strategy.hpp
// (parameter server, DDP, ZeRO-1/2/3, overlapped and offloaded variants).
// One call runs `steps` optimizer steps from the same initial parameters on
// the same global batch; check() compares the parameters each rank holds with
// the single-process reference trainer (reference/dataparallel), element by
// element, against that reference's running error bound. Predictions: bytes
// sent per step (2 Psi / 3 Psi, ring-exact), parameter-server load, memory
// per category (docs/dataparallel.md's (P+G+K) Psi structure with fp32 = 4+4+8 bytes per
// parameter), host-link bytes of the offload, and the IMB-NBC overlap %.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <map>
#include <memory>

#include "kernels/dataparallel/dp_trainer.hpp"
#include "kernels/nn/gemm_rate.hpp"
#include "reference/dataparallel/mlp_reference.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/registry.hpp"
#include "suites/dataparallel/dp_predictions.hpp"

namespace {

using namespace sp::dp;

class DpTrain : public sp::Technique {
 public:
  DpTrain() : Technique(describe()) {}

  static sp::Info describe() {
    sp::Info i;
    i.name = "dp_train";
    i.family = "dataparallel";
    i.summary = "MLP training: parameter server, DDP, ZeRO-1/2/3, overlap, offload";
    // bucket_bytes: DDP's bucket cap (PyTorch bucket_cap_mb), chosen per set so
    // that some buckets hold several layers and some one.
    auto set = [](const char* dtype, int in, int width, int depth, int out, int batch, int steps, int bucket_bytes) {
      return sp::Params{{"dtype", dtype},
                        {"in", std::to_string(in)},
                        {"width", std::to_string(width)},
                        {"depth", std::to_string(depth)},
                        {"out", std::to_string(out)},
                        {"batch", std::to_string(batch)},
                        {"steps", std::to_string(steps)},
                        {"bucket_bytes", std::to_string(bucket_bytes)}};
    };
    // Conformance: tiny, odd widths so chunks are uneven; batch 12 divides by 1..4.
    i.param_sets.push_back({sp::Size::conformance, set("fp64", 6, 10, 2, 3, 12, 3, 1536)});
    i.param_sets.push_back({sp::Size::conformance, set("fp32", 5, 7, 3, 2, 12, 2, 512)});
    i.param_sets.push_back({sp::Size::small, set("fp32", 64, 256, 4, 16, 256, 2, 300000)});
    i.param_sets.push_back({sp::Size::medium, set("fp32", 256, 1024, 4, 64, 128, 2, 8 << 20)});
    i.param_sets.push_back({sp::Size::large, set("fp32", 1024, 4096, 4, 256, 256, 2, 25 << 20)});
    for (auto& n : kVariants) i.variants.push_back(sp::Variant::strategy(n.name));
    i.ranks = {1, 1 << 30, false};
    i.headline = {"peak optimizer state (device)"};
    i.source = "docs/dataparallel.md Data parallelism and ZeRO; docs/dataparallel.md";
    return i;
  }

  void validate(const sp::Params& p, int nranks) const override {
    Technique::validate(p, nranks);  // every size > 0: depth 0 (no hidden layer) is rejected here
    const auto& t = p.s("dtype");
    if (t != "fp32" && t != "fp64") throw sp::InputError("dp_train: unknown dtype '" + t + "' (fp32 or fp64)");
    for (auto* k : {"in", "width", "depth", "out", "batch", "steps"})
      if (p.i(k) > (int64_t(1) << 20))
        throw sp::InputError(std::string("dp_train: ") + k + " above 2^20 is not supported");
    if (p.i("batch") % nranks != 0)
      throw sp::InputError("dp_train: global batch " + std::to_string(p.i("batch")) + " does not divide over " +
                           std::to_string(nranks) + " ranks (each rank takes batch/p samples)");
    const MlpShape s = shape_of(p);
    if (static_cast<size_t>(nranks) > s.min_block())
      throw sp::InputError("dp_train: " + std::to_string(nranks) + " ranks exceed the " +
                           std::to_string(s.min_block()) +
                           " parameters of the smallest layer, which ZeRO shards over every rank");
  }

  sp::Counts counts(const sp::Params& p, int nranks) const override {
    const MlpShape s = shape_of(p);
    const double es = p.s("dtype") == "fp32" ? 4 : 8, n = static_cast<double>(s.n_params());
    const double local = static_cast<double>(p.i("batch") / nranks), steps = static_cast<double>(p.i("steps"));
    sp::Counts c;
    // The products of gemm_shapes(): forward, dW of every layer, dA of every layer but the first.
    c.flops = 0;
    for (const auto& g : gemm_shapes(s, static_cast<int>(local), static_cast<int>(steps))) c.flops += g.flops();
    // Per step: weights read three times (forward, dA, and by Adam with m, v, g) and written once.
    c.bytes_read = steps * es * (3 * n + 3 * n);
    c.bytes_written = steps * es * 3 * n;
    c.dtype = p.s("dtype");
    return c;
  }

  void setup(const sp::Params& p, int nranks) override {
    params_ = p;
    f32_ = p.s("dtype") == "fp32";
    shape_ = shape_of(p);
    transport_ = sp::comm::make_world_transport();
    if (transport_->size() != nranks) throw std::runtime_error("dp_train: transport size differs from the rank count");
    if (f32_)
      d32_ = make_data<float>();
    else
      d64_ = make_data<double>();
  }

  void run(const std::string& variant) override {
    if (f32_)
      run_t(d32_, variant);
    else
      run_t(d64_, variant);
  }

  sp::CheckResult check(const std::string& variant) override {
    return f32_ ? check_t(d32_, variant) : check_t(d64_, variant);
  }

  void report_counters(const std::string& variant, std::map<std::string, double>& out) override {
    if (f32_)
      counters_t(d32_, variant, out);
    else
      counters_t(d64_, variant, out);
  }

  void teardown() override { d32_ = {}, d64_ = {}, transport_.reset(); }

  void predict(const sp::Params& p, const std::string& variant, const sp::Measurement& m, const sp::Machine& machine,
               std::vector<sp::Verdict>& out) const override {
    // The roofline is reported, not judged: a data-parallel step's time is
    // mostly communication and waiting, which the roofline does not model.
    const size_t first = out.size();
    Technique::predict(p, variant, m, machine, out);
    for (size_t i = first; i < out.size(); ++i) out[i].status = sp::Status::info;
    append_dp_verdicts(info_.name, p, shape_of(p), bucket_elems(p), variant, m, out);
    sp::nn::append_gemm_rate_verdict(info_, p, variant, counts(p, m.ranks).flops, m, true, out);
  }

 private:
  template <class T>
  struct Data {
    std::vector<T> theta0, X, Y;
    std::map<std::string, std::unique_ptr<DpTrainer<T>>> trainers;
    std::unique_ptr<ref::Result> reference;
    std::map<std::string, double> last;  // counters of the last run, per variant
    sp::nn::GemmAtShapes gemm_at;        // this rank's products of one call, timed in turn with it
  };

  // The products one call makes on a rank of local batch b: per step and
  // layer, Z = A W^T (b x out x in), dW = dZ^T A (out x in x b) and, but for
  // the first layer, dA = dZ W (b x in x out).
  static std::vector<sp::nn::GemmShape> gemm_shapes(const MlpShape& s, int b, int steps) {
    std::vector<sp::nn::GemmShape> g;
    for (int l = 1; l <= s.layers(); ++l) {
      g.push_back({b, s.out(l), s.in(l), double(steps)});
      g.push_back({s.out(l), s.in(l), b, double(steps)});
      if (l > 1) g.push_back({b, s.in(l), s.out(l), double(steps)});
    }
    return g;
  }

  static size_t bucket_elems(const sp::Params& p) {
    return static_cast<size_t>(p.i("bucket_bytes")) / (p.s("dtype") == "fp32" ? 4 : 8);
  }
  static MlpShape shape_of(const sp::Params& p) {
    return MlpShape::make(static_cast<int>(p.i("in")), static_cast<int>(p.i("width")), static_cast<int>(p.i("depth")),
                          static_cast<int>(p.i("out")));
  }

  template <class T>
  Data<T> make_data() {
    Data<T> d;
    const int B = static_cast<int>(params_.i("batch"));
    d.theta0 = initial_params<T>(shape_);
    d.X = batch_inputs<T>(shape_, B);
    d.Y = batch_targets<T>(shape_, B);
    return d;
  }

  template <class T>
  DpTrainer<T>& trainer(Data<T>& d, const std::string& variant) {
    auto& tr = d.trainers[variant];
    if (!tr)
      tr = std::make_unique<DpTrainer<T>>(shape_, static_cast<int>(params_.i("batch")), AdamConfig{},
                                          parse_variant(variant), *transport_, bucket_elems(params_));
    return *tr;
  }

  // The timed body: `steps` optimizer steps from the initial parameters.
  template <class T>
  void run_t(Data<T>& d, const std::string& variant) {
    auto& tr = trainer(d, variant);
    tr.load(d.theta0, d.X, d.Y);
    transport_->reset_traffic();
    tr.reset_memory_peaks();
    const int steps = static_cast<int>(params_.i("steps"));
    for (int s = 0; s < steps; ++s) tr.step();
    const auto total = transport_->total();
    auto& c = d.last;
    c["bytes_sent_per_step"] = static_cast<double>(total.bytes_sent) / steps;
    c["bytes_recv_per_step"] = static_cast<double>(total.bytes_recv) / steps;
    c["host_link_bytes_per_step"] = tr.host_link_bytes() / steps;
    c["shard_params"] = static_cast<double>(tr.shard_size());
    for (int k = 0; k < MemoryTracker::N; ++k)
      c[std::string("peak_") + mem_name(static_cast<Mem>(k))] = tr.memory().peak(static_cast<Mem>(k));
    c["peak_total"] = tr.memory().peak_total();
  }

  template <class T>
  sp::CheckResult check_t(Data<T>& d, const std::string& variant) {
    if (!d.reference)
      d.reference = std::make_unique<ref::Result>(ref::train<T>(shape_, static_cast<int>(params_.i("batch")),
                                                                static_cast<int>(params_.i("steps")), AdamConfig{},
                                                                d.theta0, d.X, d.Y, sp::unit_roundoff<T>()));
    sp::Comparator cmp("running error bound through fwd/bwd/Adam (mlp_reference.hpp)");
    for (auto& [i, v] : trainer(d, variant).held_params())
      cmp.add(static_cast<double>(v), static_cast<double>(d.reference->theta[i]), d.reference->bound[i]);
    return cmp.result();
  }

  // Counters of the benchmark's last run, plus the IMB-NBC overlap
  // measurement for the variants that have a blocking / overlapped pair.
  template <class T>
  void counters_t(Data<T>& d, const std::string& variant, std::map<std::string, double>& out) {
    // Zero-valued counters are left out: Google Benchmark's cv statistic of an
    // all-zero counter is 0/0, written as "-nan", which is not JSON. predict()
    // reads a missing counter as 0.
    for (auto& [k, val] : d.last)
      if (val != 0) out[k] = val;
    if (d.gemm_at.flops() == 0)
      d.gemm_at.template prepare<T>(gemm_shapes(shape_, static_cast<int>(params_.i("batch")) / transport_->size(),
                                                static_cast<int>(params_.i("steps"))));
    probed_ = nullptr;
    if (!has_overlap_pair(variant)) return;
    auto& tr = trainer(d, variant);
    tr.load(d.theta0, d.X, d.Y);
    probed_ = &tr.pass_clock();
  }

  // The IMB-NBC overlap measurement for the variants that have a blocking /
  // overlapped pair: a step's pass (forward, backward, gradient
  // communication; DpTrainer::kPass) with both, compute only and
  // communication only, in turn, medians of 5 (the slowest rank's). Times
  // only (never zero); predict() computes the overlap % from them.
  static bool has_overlap_pair(const std::string& variant) {
    const Variant v = parse_variant(variant);
    return !(v.offload || v.strategy == Strategy::param_server || v.strategy == Strategy::zero1);
  }

  std::vector<sp::Probe> probes(const std::string& variant) const override {
    std::vector<sp::Probe> out = sp::nn::gemm_rate_probes(variant);
    if (!has_overlap_pair(variant)) return out;
    sp::Probe p{"", {variant + "|both", variant + "|compute", variant + "|comm"}};
    p.samples = 5;
    p.each = {"t_ovrl_s", "t_cpu_s", "t_pure_comm_s"};
    p.phase = kPassPhase;
    out.push_back(p);
    return out;
  }

  // A probe call: the products at this rank's shapes, a whole call of a
  // variant, or "variant|mode" (a pass with both, compute only or
  // communication only).
  void run_probe(const std::string& call) override {
    if (call == sp::nn::kGemmCall) {
      if (f32_)
        d32_.gemm_at.run();
      else
        d64_.gemm_at.run();
      return;
    }
    const auto bar = call.rfind('|');
    if (bar == std::string::npos) return run(call);
    const std::string variant = call.substr(0, bar), mode = call.substr(bar + 1);
    if (f32_)
      probe_step(d32_, variant, mode);
    else
      probe_step(d64_, variant, mode);
  }

  const sp::PhaseClock* phase_clock() const override { return probed_; }

  void probes_done(const std::string& variant, std::map<std::string, double>& out) override {
    sp::nn::gemm_rate_counters(f32_ ? d32_.gemm_at : d64_.gemm_at, out);
    if (!has_overlap_pair(variant)) return;
    if (f32_)
      trainer(d32_, variant).set_skip(false, false);
    else
      trainer(d64_, variant).set_skip(false, false);
    probed_ = nullptr;
  }

  template <class T>
  void probe_step(Data<T>& d, const std::string& variant, const std::string& mode) {
    auto& tr = trainer(d, variant);
    tr.set_skip(mode == "comm", mode == "compute");
    tr.step();
  }

  sp::Params params_;
  bool f32_ = true;
  MlpShape shape_;
  std::unique_ptr<sp::comm::Transport> transport_;
  const sp::PhaseClock* probed_ = nullptr;  // the overlap probe's trainer clock
  Data<float> d32_;
  Data<double> d64_;
};

SP_REGISTER_TECHNIQUE(DpTrain);

}  // namespace
