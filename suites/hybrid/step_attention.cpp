// step_attention: the attention core of the composed step and of the layer
// library (kernels/modelparallel/attention_core.hpp) at one shape and
// storage type: `pass` forward (P = softmax(scale Q K^T + causal mask),
// O = P V as batched products over (sample, head)) or backward (dS, then
// dQ, dK, dV), each pass one call, on the step's layout - Q, K and V are
// column blocks of one [b s, 3 heads d] activation and each head's matrices
// are strided views of it. The timed loop cycles over `sets` copies of the
// buffers, as step_gemm does: with copies that add up to more than the
// last-level cache every call reads them from memory, as a training step's
// attention does. The planner's verification times the core inside a pass
// of the step's blocks instead (block_pass_rates.hpp), where it runs slower
// than back to back (docs/planner.md, "Why the layers are timed in a pass").
#include <Kokkos_Core.hpp>
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/hybrid/layout.hpp"
#include "kernels/modelparallel/attention_core.hpp"
#include "kernels/precision/float16.hpp"
#include "reference/hybrid/attention_ref.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/registry.hpp"
#include "suites/hybrid/per_storage.hpp"
#include "suites/hybrid/step_sets.hpp"
#include "suites/hybrid/touched_buffer.hpp"

namespace {

// One copy of the core's buffers in storage type S: inputs qkv and dO, P
// (the forward's output, the backward's input), O, scratch dS and dQKV.
template <class S>
struct Buffers {
  Kokkos::View<S*> qkv, p, o, dout, ds, g;
};
template <class S>
using Sets = std::vector<Buffers<S>>;

class StepAttention : public sp::Technique {
 public:
  StepAttention() : Technique(describe()) {}

  static sp::Info describe() {
    sp::Info i;
    i.name = "step_attention";
    i.family = "hybrid";
    i.summary = "the step's causal attention core (batched strided products and softmax), forward or backward";
    auto set = [](const char* t, int b, int s, int heads, int d, const char* pass, int sets) {
      return sp::Params{{"dtype", t},
                        {"b", std::to_string(b)},
                        {"s", std::to_string(s)},
                        {"heads", std::to_string(heads)},
                        {"d", std::to_string(d)},
                        {"pass", pass},
                        {"sets", std::to_string(sets)}};
    };
    for (const char* pass : {"forward", "backward"}) {
      // Sizes that are no multiple of any tile; several copies once.
      i.param_sets.push_back({sp::Size::conformance, set("fp64", 2, 5, 2, 3, pass, 1)});
      i.param_sets.push_back({sp::Size::conformance, set("fp32", 1, 9, 3, 4, pass, 2)});
      i.param_sets.push_back({sp::Size::conformance, set("fp16", 2, 6, 2, 4, pass, 1)});
      i.param_sets.push_back({sp::Size::conformance, set("bf16", 2, 6, 2, 4, pass, 1)});
      // One rank's micro-batch of the planner's scaled-down shape, in cache
      // and from memory (24 copies: 75 MiB in fp32).
      for (const char* t : {"fp32", "bf16"})
        for (int sets : {1, 24}) i.param_sets.push_back({sp::Size::small, set(t, 8, 64, 4, 32, pass, sets)});
    }
    i.param_rules = {{"sets", 1, 4096}};
    i.variants = {sp::Variant::kernel("kokkos")};
    i.source =
        "docs/planner.md Verification; MODELS.md Tensor parallelism (attention); FLOPs 4 b heads s^2 d per product "
        "pair";
    return i;
  }

  void validate(const sp::Params& p, int nranks) const override {
    Technique::validate(p, nranks);
    const auto& t = p.s("dtype");
    if (t != "fp32" && t != "fp64" && t != "fp16" && t != "bf16")
      throw sp::InputError("step_attention: unknown dtype '" + t + "' (fp32, fp64, fp16 or bf16)");
    const auto& pass = p.s("pass");
    if (pass != "forward" && pass != "backward")
      throw sp::InputError("step_attention: unknown pass '" + pass + "' (forward or backward)");
    const double b = double(p.i("b")), s = double(p.i("s")), heads = double(p.i("heads")), d = double(p.i("d"));
    // Every index of the core is an int: rows b s, columns 3 heads d, scores b heads s^2.
    if (b * heads * s * s >= 2147483647.0 || b * s * 3 * heads * d >= 2147483647.0)
      throw sp::InputError("step_attention: b heads s^2 and b s 3 heads d must stay below 2^31");
    if (double(p.i("sets")) * sp::hybrid::attention_set_elements(b, s, heads, d) * element_bytes(t) >
        double(int64_t(1) << 34))
      throw sp::InputError("step_attention: sets x the core's buffers exceed 16 GiB");
  }

  sp::Counts counts(const sp::Params& p, int) const override {
    const double b = double(p.i("b")), s = double(p.i("s")), heads = double(p.i("heads")), d = double(p.i("d"));
    const double n = b * s, hl = heads * d, scores = b * heads * s * s, es = element_bytes(p.s("dtype"));
    const bool fwd = p.s("pass") == "forward";
    sp::Counts c;
    // Forward: Q K^T and P V; backward: dO V^T, dS K, dS^T Q, P^T dO; each
    // 2 s^2 d per (sample, head).
    c.flops = (fwd ? 2 : 4) * 2 * b * heads * s * s * d;
    // Each operand once: forward reads QKV, writes and rereads the scores
    // in place (softmax), writes O; backward reads QKV, P and dO, writes dS,
    // rereads it twice and writes dQKV.
    c.bytes_read = (fwd ? 3 * n * hl + scores : 3 * n * hl + scores + n * hl + 2 * scores) * es;
    c.bytes_written = (fwd ? 2 * scores + n * hl : 2 * scores + 3 * n * hl) * es;
    c.dtype = p.s("dtype");
    return c;
  }

  void setup(const sp::Params& p, int) override {
    dtype_ = p.s("dtype");
    sh_ = {int(p.i("b")), int(p.i("s")), int(p.i("heads")), int(p.i("d"))};
    forward_ = p.s("pass") == "forward";
    sets_ = static_cast<int>(p.i("sets"));
    next_ = last_ = 0;
    const size_t n = size_t(sh_.b) * sh_.s, hl = size_t(sh_.hl());
    hqkv_.resize(n * 3 * hl), hdo_.resize(n * hl);
    // Mixed signs and magnitudes, multiples of 2^-7 with at most 8
    // significant bits: exact in every storage type.
    for (size_t x = 0; x < hqkv_.size(); ++x) hqkv_[x] = float(int64_t(x * 37 % 101) - 50) / 64.0f;
    for (size_t x = 0; x < hdo_.size(); ++x) hdo_[x] = float(int64_t(x * 53 % 97) - 48) / 128.0f;
    data_.with(dtype_, [&](auto& s) { fill(s); });
  }

  void run(const std::string&) override {
    data_.with(dtype_, [&](auto& s) { run_t(s); });
  }

  sp::CheckResult check(const std::string&) override {
    return data_.with(dtype_, [&](auto& s) { return check_t(s); });
  }

  void teardown() override { data_.clear(); }

 private:
  static double element_bytes(const std::string& t) { return sp::hybrid::element_bytes(sp::hybrid::parse_storage(t)); }
  template <class S>
  void fill(Sets<S>& sets) {
    const size_t n = size_t(sh_.b) * sh_.s, hl = size_t(sh_.hl()), scores = size_t(sh_.b) * sh_.heads * sh_.s * sh_.s;
    Kokkos::View<S*, Kokkos::HostSpace> q("step_attention_hqkv", hqkv_.size()), o("step_attention_hdo", hdo_.size());
    for (size_t x = 0; x < hqkv_.size(); ++x) q(x) = sp::nn::store_as<S>(hqkv_[x], 0);
    for (size_t x = 0; x < hdo_.size(); ++x) o(x) = sp::nn::store_as<S>(hdo_[x], 0);
    using Mem = Kokkos::DefaultExecutionSpace::memory_space;
    sets.clear();
    // The passes write all of P, O, dS and dQKV before reading them.
    auto buffer = [](const char* name, size_t count) { return sp::hybrid::touched_buffer<S>(name, count); };
    for (int k = 0; k < sets_; ++k) {
      Buffers<S> b;
      b.qkv = Kokkos::create_mirror_view_and_copy(Mem(), q);
      b.dout = Kokkos::create_mirror_view_and_copy(Mem(), o);
      b.p = buffer("step_attention_p", scores);
      b.o = buffer("step_attention_o", n * hl);
      b.ds = buffer("step_attention_ds", scores);
      b.g = buffer("step_attention_dqkv", n * 3 * hl);
      // The backward's P: the forward's probabilities on these inputs, the
      // same in every copy (the same inputs, one deterministic forward).
      if (k == 0) {
        sp::mp::attention_forward<S>(sh_, b.qkv.data(), b.o.data(), b.p.data());
      } else {
        Kokkos::deep_copy(b.p, sets.front().p);
        Kokkos::deep_copy(b.o, sets.front().o);
      }
      sets.push_back(b);
    }
    Kokkos::fence();
    // The backward is checked from exactly the P it reads.
    auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sets.front().p);
    hp_.resize(scores);
    for (size_t x = 0; x < scores; ++x) hp_[x] = double(sp::nn::load(hp(x)));
  }

  template <class S>
  void run_t(Sets<S>& sets) {
    const int k = next_;
    next_ = (next_ + 1) % sets_;
    Buffers<S>& b = sets[size_t(k)];
    if (forward_)
      sp::mp::attention_forward<S>(sh_, b.qkv.data(), b.o.data(), b.p.data());
    else
      sp::mp::attention_backward<S>(sh_, b.qkv.data(), b.p.data(), b.dout.data(), b.ds.data(), b.g.data());
    last_ = k;
  }

  // Running error bound (reference/hybrid/eb.hpp) with one unit roundoff u
  // for every operation: fp32 and fp64 compute in themselves (u of the
  // type); 16-bit storage computes each operation in fp32 and rounds its
  // result at most once more into S, so each elementary result is within
  // (1 + u_32)(1 + u_S) - 1 of exact, the u the bound then uses (a dot
  // product's gamma_K of it covers fp32 accumulation plus one rounding
  // into S). The inputs are exact in S, so the reference takes the values
  // the kernel reads; the backward takes the kernel's own P as exact input.
  template <class S>
  sp::CheckResult check_t(Sets<S>& sets) {
    namespace ref = sp::hybrid::ref;
    using Acc = typename sp::nn::AccOf<S>::type;
    const double u_acc = std::is_same<Acc, double>::value ? 0x1p-53 : 0x1p-24;
    double u = u_acc;
    if constexpr (!std::is_same<S, Acc>::value) {
      const double u_s = sp::precision::StorageInfo<S>::unit_roundoff;
      u = u_acc + u_s + u_acc * u_s;
    }
    ref::set_unit_roundoff(u);
    const int n = sh_.b * sh_.s, hl = sh_.hl();
    const ref::AttnDims D{sh_.b, sh_.s, hl, sh_.heads, sh_.d, ref::R(Acc(sh_.scale()))};
    ref::Matrix Q(n, hl), K(n, hl), V(n, hl), dO(n, hl);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < hl; ++c) {
        const size_t row = size_t(r) * 3 * hl;
        Q(r, c) = ref::exact(hqkv_[row + c]), K(r, c) = ref::exact(hqkv_[row + hl + c]);
        V(r, c) = ref::exact(hqkv_[row + 2 * hl + c]), dO(r, c) = ref::exact(hdo_[size_t(r) * hl + c]);
      }
    const Buffers<S>& b = sets[size_t(last_)];
    sp::Comparator cmp(
        "running error bound, one rounding per operation with u = u_acc (+ u_S: stored in 16 bits), "
        "gamma_K for every dot product in any order (reference/hybrid/attention_ref)");
    auto compare = [&](const Kokkos::View<S*>& got, const ref::Matrix& want, size_t ld, size_t c0) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got);
      for (int r = 0; r < want.rows; ++r)
        for (int c = 0; c < want.cols; ++c) {
          const ref::E& e = want(r, c);
          cmp.add(double(sp::nn::load(h(size_t(r) * ld + c0 + size_t(c)))), double(e.v), double(e.e));
        }
    };
    if (forward_) {
      const ref::Attn a = ref::attn_forward(D, Q, K, V);
      compare(b.p, a.P, size_t(sh_.s), 0);
      compare(b.o, a.O, size_t(hl), 0);
    } else {
      ref::Attn a{ref::Matrix(sh_.b * sh_.heads * sh_.s, sh_.s), ref::Matrix()};
      for (size_t x = 0; x < hp_.size(); ++x) a.P.a[x] = ref::exact(hp_[x]);
      ref::Matrix dQ, dK, dV;
      ref::attn_backward(D, Q, K, V, a, dO, dQ, dK, dV);
      compare(b.g, dQ, size_t(3 * hl), 0);
      compare(b.g, dK, size_t(3 * hl), size_t(hl));
      compare(b.g, dV, size_t(3 * hl), size_t(2 * hl));
    }
    return cmp.result();
  }

  std::string dtype_;
  sp::mp::AttnShape sh_{1, 1, 1, 1};
  bool forward_ = true;
  int sets_ = 1, next_ = 0, last_ = 0;
  std::vector<float> hqkv_, hdo_;
  std::vector<double> hp_;
  sp::hybrid::PerStorage<Sets> data_;
};

SP_REGISTER_TECHNIQUE(StepAttention);

}  // namespace
