// Tensor parallelism (Megatron-LM) over all ranks of the run (t = ranks):
// column- and row-parallel linear layers, the MLP, self-attention split by
// heads and a whole transformer layer, each forward + backward per call.
// Conformance: every rank's outputs and gradient shards against the
// single-rank plain-loop reference (reference/modelparallel/), each element
// within its running-error bound. Verdicts: all-reduces per call forward and
// backward (docs/modelparallel.md: one each for the MLP and attention, two each per
// transformer layer), bytes sent vs the ring all-reduce's 2(t-1)/t n, and the
// per-rank parameter and activation memory vs the formulas.
#include <algorithm>
#include <memory>

#include "kernels/comm/transport.hpp"
#include "kernels/modelparallel/tp_layers.hpp"
#include "kernels/nn/gemm_rate.hpp"
#include "reference/modelparallel/transformer_ref.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/registry.hpp"
#include "suites/modelparallel/mp_data.hpp"
#include "suites/modelparallel/tp_model.hpp"

namespace {

using sp::mp::CMat;
using sp::mp::Mat;
using sp::mp::TpKind;
using sp::reference::EbMat;

class TensorParallel : public sp::nn::GemmRateTechnique {
 public:
  explicit TensorParallel(TpKind k) : GemmRateTechnique(describe(k)), kind_(k) {}

  static sp::Info describe(TpKind k) {
    sp::Info i;
    i.name = sp::mp::tp_name(k);
    i.family = "modelparallel";
    i.summary = sp::mp::tp_summary(k) + ", forward + backward, t = ranks (fp64)";
    // hidden 24, 12 heads, ffn 96: divisible by t = 1, 2, 3 and 4, so the
    // conformance set runs at every rank count of the conformance suites.
    i.param_sets.push_back({sp::Size::conformance, sp::mp::tp_params(k, 2, 8, 24, 12, 96)});
    i.param_sets.push_back({sp::Size::conformance, sp::mp::tp_params(k, 1, 5, 12, 12, 12)});
    i.param_sets.push_back({sp::Size::small, sp::mp::tp_params(k, 4, 64, 384, 12, 1536)});
    i.param_sets.push_back({sp::Size::medium, sp::mp::tp_params(k, 8, 256, 768, 12, 3072)});
    i.variants = {sp::Variant::kernel("kokkos")};
    i.ranks = {1, 64, false};
    i.headline = {"all-reduce bytes sent, all ranks"};
    i.source =
        "docs/modelparallel.md Tensor parallelism (Megatron-LM); Shoeybi et al. 2019; Korthikanti et al. 2022 Table 2";
    return i;
  }

  void validate(const sp::Params& p, int nranks) const override {
    Technique::validate(p, nranks);
    sp::mp::tp_check_shape(kind_, sp::mp::TpShape::from(p), nranks);
  }

  sp::Counts counts(const sp::Params& p, int nranks) const override {
    const auto sh = sp::mp::TpShape::from(p);
    sp::Counts c;
    c.flops = sp::mp::tp_flops(kind_, sh) / nranks;
    // Compulsory traffic, roughly: the weight shard read and its gradient
    // written, input, output and their gradients (n x max(h, ffn) each).
    const auto pr = sp::mp::tp_predict(kind_, sh, nranks);
    c.bytes_read = 8 * (pr.param_elems + 2.0 * sh.n() * std::max(sh.h, sh.ffn));
    c.bytes_written = 8 * (pr.param_elems + 2.0 * sh.n() * std::max(sh.h, sh.ffn));
    return c;
  }

  void setup(const sp::Params& p, int) override {
    sh_ = sp::mp::TpShape::from(p);
    transport_ = sp::comm::make_world_transport();
    g_ = sp::mp::TpGroup{transport_.get()};
    data_ = sp::mp::TpData::make(kind_, sh_);
    const int t = g_.size(), r = g_.rank(), fl = sh_.ffn / t;
    switch (kind_) {
      case TpKind::column:
        col_.W = sp::mp::column_slice(data_.view("A"), r * fl, fl);
        col_.dW = Mat("dA", sh_.h, fl);
        x_ = data_.view("X");
        y_ = Mat("Y", sh_.n(), fl);
        dy_ = sp::mp::column_slice(data_.view("dY"), r * fl, fl);
        dx_ = Mat("dX", sh_.n(), sh_.h);
        break;
      case TpKind::row:
        row_.W = sp::mp::row_slice(data_.view("B"), r * fl, fl);
        row_.dW = Mat("dB", fl, sh_.h);
        x_ = sp::mp::column_slice(data_.view("X"), r * fl, fl);
        y_ = Mat("Y", sh_.n(), sh_.h);
        dy_ = data_.view("dY");
        dx_ = Mat("dX", sh_.n(), fl);
        break;
      case TpKind::mlp: mlp_.init(g_, data_.view("A"), data_.view("B")); break;
      case TpKind::attention: init_attention(layer_.attn); break;
      case TpKind::layer:
        init_attention(layer_.attn);
        layer_.mlp.init(g_, data_.view("A"), data_.view("B"));
        break;
    }
    if (kind_ != TpKind::column && kind_ != TpKind::row) {
      x_ = data_.view("X");
      dy_ = data_.view("dY");
      y_ = Mat("Y", sh_.n(), sh_.h);
      dx_ = Mat("dX", sh_.n(), sh_.h);
    }
  }

  void run(const std::string&) override {
    g_.allreduce_fwd = g_.allreduce_bwd = 0;
    g_.bytes_sent = g_.messages_sent = 0;
    switch (kind_) {
      case TpKind::column: col_.forward(x_, y_), col_.backward(g_, dy_, dx_); break;
      case TpKind::row: row_.forward(g_, x_, y_), row_.backward(dy_, dx_); break;
      case TpKind::mlp: mlp_.forward(g_, x_, y_), mlp_.backward(g_, dy_, dx_); break;
      case TpKind::attention: layer_.attn.forward(g_, x_, y_), layer_.attn.backward(g_, dy_, dx_); break;
      case TpKind::layer: layer_.forward(g_, x_, y_), layer_.backward(g_, dy_, dx_); break;
    }
  }

  sp::CheckResult check(const std::string&) override {
    sp::CheckResult r = sp::mp::tp_check(kind_, sh_, data_, g_.rank(), g_.size(), {y_, dx_, grads()});
    // The call's communication is an exact prediction, checked at every rank count too.
    const auto pr = sp::mp::tp_predict(kind_, sh_, g_.size());
    sp::Comparator counts("counts");
    counts.add(g_.allreduce_fwd, pr.allreduce_fwd, 0);
    counts.add(g_.allreduce_bwd, pr.allreduce_bwd, 0);
    const double ring = sp::mp::ring_allreduce_bytes(static_cast<size_t>(sh_.n()) * sh_.h, g_.size(), g_.rank());
    counts.add(static_cast<double>(g_.bytes_sent), (pr.allreduce_fwd + pr.allreduce_bwd) * ring, 0);
    r.merge(counts.result());
    return r;
  }

  void report_counters(const std::string&, std::map<std::string, double>& out) override {
    // Every rank calls this; sums and maxima over the group go to rank 0's results.
    out["allreduce_fwd"] = sp::comm::max(static_cast<double>(g_.allreduce_fwd));
    out["allreduce_bwd"] = sp::comm::max(static_cast<double>(g_.allreduce_bwd));
    out["allreduce_bytes_sent_all_ranks"] = sp::comm::sum(static_cast<double>(g_.bytes_sent));
    out["param_elems_max_rank"] = sp::comm::max(static_cast<double>(param_elems()));
    out["stash_elems_max_rank"] = sp::comm::max(static_cast<double>(stash_elems()));
    if (gemm_at_.flops() == 0) gemm_at_.prepare<double>(sp::mp::tp_gemm_shapes(kind_, sh_, g_.size()));
    sp::mp::drop_zeros(out);
  }

  void predict(const sp::Params& p, const std::string& variant, const sp::Measurement& m, const sp::Machine&,
               std::vector<sp::Verdict>& out) const override {
    sp::mp::tp_verdicts(info_, kind_, p, variant, m, out);
  }

  void teardown() override {
    col_ = {}, row_ = {}, mlp_ = {}, layer_ = {};
    x_ = y_ = dy_ = dx_ = {};
    gemm_at_.clear();
    transport_.reset();
  }

 private:
  void init_attention(sp::mp::TpAttention& a) {
    a.init(g_, sh_.b, sh_.s, sh_.heads, data_.view("Wq"), data_.view("Wk"), data_.view("Wv"), data_.view("Wo"));
  }
  std::vector<CMat> grads() const {
    switch (kind_) {
      case TpKind::column: return {col_.dW};
      case TpKind::row: return {row_.dW};
      case TpKind::mlp: return {mlp_.fc1.dW, mlp_.fc2.dW};
      case TpKind::attention: return {layer_.attn.qkv.dW, layer_.attn.proj.dW};
      case TpKind::layer: return {layer_.attn.qkv.dW, layer_.attn.proj.dW, layer_.mlp.fc1.dW, layer_.mlp.fc2.dW};
    }
    return {};
  }
  size_t param_elems() const {
    switch (kind_) {
      case TpKind::column: return col_.W.size();
      case TpKind::row: return row_.W.size();
      case TpKind::mlp: return mlp_.param_elems();
      case TpKind::attention: return layer_.attn.param_elems();
      case TpKind::layer: return layer_.param_elems();
    }
    return 0;
  }
  size_t stash_elems() const {
    switch (kind_) {
      case TpKind::column: return col_.X.size();
      case TpKind::row: return row_.X.size();
      case TpKind::mlp: return mlp_.stash_elems();
      case TpKind::attention: return layer_.attn.stash_elems();
      case TpKind::layer: return layer_.stash_elems();
    }
    return 0;
  }

  TpKind kind_;
  sp::mp::TpShape sh_{};
  std::unique_ptr<sp::comm::Transport> transport_;
  sp::mp::TpGroup g_;
  sp::mp::TpData data_;
  sp::mp::ColumnParallelLinear col_;
  sp::mp::RowParallelLinear row_;
  sp::mp::TpMlp mlp_;
  sp::mp::TpTransformerLayer layer_;
  Mat x_, y_, dy_, dx_;
};

SP_REGISTER_TECHNIQUE(TensorParallel, TpKind::column);
SP_REGISTER_TECHNIQUE(TensorParallel, TpKind::row);
SP_REGISTER_TECHNIQUE(TensorParallel, TpKind::mlp);
SP_REGISTER_TECHNIQUE(TensorParallel, TpKind::attention);
SP_REGISTER_TECHNIQUE(TensorParallel, TpKind::layer);

}  // namespace
