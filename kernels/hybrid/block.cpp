#include "kernels/hybrid/block.hpp"

#include "kernels/hybrid/ring_order.hpp"
#include "kernels/modelparallel/attention_core.hpp"
#include "kernels/nn/activations.hpp"
#include "kernels/nn/gemm.hpp"
#include "kernels/nn/layernorm.hpp"
#include "scaleproof/measure.hpp"

namespace sp::hybrid {

using nn::Op;

namespace {
// f(), and with a clock its time under `phase`, fenced: Kokkos kernels may
// return before they finish.
template <class F>
void timed(PhaseClock* clock, const char* phase, F&& f) {
  if (!clock) return f();
  clock->time(phase, [&] {
    f();
    Kokkos::fence();
  });
}

mp::AttnShape attn_shape(const BlockAct& a) { return {a.r.b, a.r.s, a.k.heads, a.k.d}; }

// out (count elements) := the sum over the tensor-parallel ranks of their
// partial products, part(i, split, dst) writing slice i of `split` of this
// rank's partial (rounded to T, as a GEMM stores it). On the group
// (split = 1): this rank's partial, then the ring all-reduce. On one rank
// reproducing a split of p (split = p > 1, the group has one rank): the p
// partials as the p ranks form them, added in the ring's order
// (ring_order.hpp), which is the all-reduce's arithmetic.
template <class T, class Part>
void summed_product(GroupComm<T>& tp, int split, T* out, size_t count, Part&& part) {
  if (split <= 1) {
    part(0, 1, out);
    tp.all_reduce(out, count);
    return;
  }
  Kokkos::View<T*> parts(Kokkos::view_alloc(std::string("hybrid_split_parts"), Kokkos::WithoutInitializing),
                         size_t(split) * count);
  for (int i = 0; i < split; ++i) part(i, split, parts.data() + size_t(i) * count);
  ring_order_sum(parts.data(), split, count, PartitionChunk{count, split}, out);
}

// dst (rows x 3 w) := the columns of slice i of `split` of each of the three
// w_all-wide column groups (Q | K | V) of src (rows x 3 w_all), w = w_all /
// split: rank i's [Q_i | K_i | V_i] columns as that rank stores them.
template <class T>
void qkv_slice(int rows, int w_all, int split, int i, const T* src, T* dst) {
  const int w = w_all / split;
  Kokkos::parallel_for(
      "hybrid_qkv_slice", Kokkos::RangePolicy<>(0, int64_t(rows) * 3 * w), KOKKOS_LAMBDA(const int64_t idx) {
        const int64_t r = idx / (3 * w), c = idx % (3 * w), g = c / w;
        dst[idx] = src[r * 3 * w_all + g * w_all + int64_t(i) * w + c % w];
      });
}
}  // namespace

template <class T>
void block_forward(const BlockAct& a, const T* w, const T* x, T* act, GroupComm<T>& tp, int split, PhaseClock* clock) {
  using A = typename nn::AccOf<T>::type;
  auto stat = [&](int64_t off) { return reinterpret_cast<A*>(act + off); };  // aligned: BlockAct's layout
  const BlockShape& k = a.k;
  const int n = a.r.n(), h = k.h, hl = k.hl(), fl = k.fl;
  T *ln1 = act + a.ln1(), *qkv = act + a.qkv(), *o = act + a.o(), *x1 = act + a.x1(), *ln2 = act + a.ln2();
  T *z = act + a.z(), *hh = act + a.hh(), *out = act + a.out();
  const char* ew = kPhaseElementwise;
  timed(clock, ew, [&] {
    nn::layernorm_forward<T>(n, h, x, w + k.ln1_g(), w + k.ln1_b(), A(kLnEps), ln1, stat(a.mu1()), stat(a.rs1()));
  });
  timed(clock, block_phase_gemm(false, 0),
        [&] { nn::gemm(Op::N, Op::N, n, 3 * hl, h, ln1, h, w + k.wqkv(), 3 * hl, qkv, 3 * hl); });
  timed(clock, kPhaseAttentionForward, [&] { mp::attention_forward<T>(attn_shape(a), qkv, o, act + a.p()); });
  timed(clock, block_phase_gemm(false, 3), [&] {
    // g: sum of the row-parallel partial products O_i Wo_i.
    summed_product(tp, split, x1, size_t(n) * h, [&](int i, int p, T* dst) {
      nn::gemm(Op::N, Op::N, n, h, hl / p, o + i * (hl / p), hl, w + k.wo() + int64_t(i) * (hl / p) * h, h, dst, h);
    });
  });
  timed(clock, ew, [&] {
    nn::add(x, x1, x1, int64_t(n) * h);
    nn::layernorm_forward<T>(n, h, x1, w + k.ln2_g(), w + k.ln2_b(), A(kLnEps), ln2, stat(a.mu2()), stat(a.rs2()));
  });
  timed(clock, block_phase_gemm(false, 4), [&] { nn::gemm(Op::N, Op::N, n, fl, h, ln2, h, w + k.w1(), fl, z, fl); });
  timed(clock, ew, [&] { nn::gelu_forward(z, hh, int64_t(n) * fl); });
  timed(clock, block_phase_gemm(false, 5), [&] {
    summed_product(tp, split, out, size_t(n) * h, [&](int i, int p, T* dst) {  // g: H_i W2_i
      nn::gemm(Op::N, Op::N, n, h, fl / p, hh + i * (fl / p), fl, w + k.w2() + int64_t(i) * (fl / p) * h, h, dst, h);
    });
  });
  timed(clock, ew, [&] { nn::add(x1, out, out, int64_t(n) * h); });
}

template <class T>
void block_backward(const BlockAct& a, const T* w, typename nn::AccOf<T>::type* gw, const T* x, const T* act,
                    const T* dy, T* dx, T* scratch, GroupComm<T>& tp, int split, bool accumulate, PhaseClock* clock) {
  using A = typename nn::AccOf<T>::type;
  auto stat = [&](int64_t off) { return reinterpret_cast<const A*>(act + off); };
  const BlockShape& k = a.k;
  const BlockScratch sc{k, a.r, a.st};
  const int n = a.r.n(), h = k.h, hl = k.hl(), fl = k.fl;
  const T *ln1 = act + a.ln1(), *qkv = act + a.qkv(), *o = act + a.o(), *x1 = act + a.x1();
  const T *ln2 = act + a.ln2(), *z = act + a.z(), *hh = act + a.hh();
  T *dln = scratch + sc.dln(), *dx1 = scratch + sc.dx1(), *dz = scratch + sc.dz(), *dout = scratch + sc.dout();
  T *ds = scratch + sc.ds(), *dqkv = scratch + sc.dqkv();
  A* dnorm = reinterpret_cast<A*>(scratch + sc.dnorm());  // aligned: first in the scratch
  const char* ew = kPhaseElementwise;
  auto gemm = [&](int i, auto&& f) { timed(clock, block_phase_gemm(true, i), f); };
  // A layer norm's two parameter gradients (gamma and beta, adjacent in dnorm and in gw) into g.
  auto norm_grads = [&](A* g) {
    using U = Kokkos::View<A*, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    if (accumulate)
      nn::add(g, dnorm, g, 2 * int64_t(h));
    else
      Kokkos::deep_copy(U(g, size_t(2 * h)), U(dnorm, size_t(2 * h)));
  };
  // MLP: out = x1 + GeLU(ln2 W1) W2.
  gemm(0, [&] { nn::gemm(Op::N, Op::T, n, fl, h, dy, h, w + k.w2(), h, dz, fl); });                 // dH = dy W2^T
  gemm(1, [&] { nn::gemm(Op::T, Op::N, fl, h, n, hh, fl, dy, h, gw + k.w2(), h, accumulate); });    // dW2 += H^T dy
  timed(clock, ew, [&] { nn::gelu_backward(z, dz, dz, int64_t(n) * fl); });                         // dZ = dH gelu'(Z)
  gemm(2, [&] { nn::gemm(Op::T, Op::N, h, fl, n, ln2, h, dz, fl, gw + k.w1(), fl, accumulate); });  // dW1 += ln2^T dZ
  // f: the column-parallel input gradient d ln2 = sum_i dZ_i W1_i^T.
  gemm(3, [&] {
    summed_product(tp, split, dln, size_t(n) * h, [&](int i, int p, T* dst) {
      nn::gemm(Op::N, Op::T, n, h, fl / p, dz + i * (fl / p), fl, w + k.w1() + i * (fl / p), fl, dst, h);
    });
  });
  timed(clock, ew, [&] {
    nn::layernorm_backward<T>(n, h, x1, w + k.ln2_g(), stat(a.mu2()), stat(a.rs2()), dln, dx1, dnorm, dnorm + h);
    norm_grads(gw + k.ln2_g());
    nn::add(dx1, dy, dx1, int64_t(n) * h);
  });
  // Attention: x1 = x + Attn(ln1) Wo.
  gemm(4, [&] { nn::gemm(Op::N, Op::T, n, hl, h, dx1, h, w + k.wo(), h, dout, hl); });            // dO = dx1 Wo^T
  gemm(5, [&] { nn::gemm(Op::T, Op::N, hl, h, n, o, hl, dx1, h, gw + k.wo(), h, accumulate); });  // dWo += O^T dx1
  timed(clock, kPhaseAttentionBackward,
        [&] { mp::attention_backward<T>(attn_shape(a), qkv, act + a.p(), dout, ds, dqkv); });
  gemm(10, [&] {  // dWqkv += ln1^T dQKV
    nn::gemm(Op::T, Op::N, h, 3 * hl, n, ln1, h, dqkv, 3 * hl, gw + k.wqkv(), 3 * hl, accumulate);
  });
  // f: d ln1 = sum_i dQKV_i Wqkv_i^T, rank i's columns [Q_i | K_i | V_i] contiguous as it stores them.
  gemm(11, [&] {
    summed_product(tp, split, dln, size_t(n) * h, [&](int i, int p, T* dst) {
      if (p == 1) {
        nn::gemm(Op::N, Op::T, n, h, 3 * hl, dqkv, 3 * hl, w + k.wqkv(), 3 * hl, dst, h);
        return;
      }
      const int wl = 3 * (hl / p);
      Kokkos::View<T*> dq("hybrid_split_dqkv", size_t(n) * wl), wq("hybrid_split_wqkv", size_t(h) * wl);
      qkv_slice(n, hl, p, i, dqkv, dq.data());
      qkv_slice(h, hl, p, i, w + k.wqkv(), wq.data());
      nn::gemm(Op::N, Op::T, n, h, wl, dq.data(), wl, wq.data(), wl, dst, h);
    });
  });
  timed(clock, ew, [&] {
    nn::layernorm_backward<T>(n, h, x, w + k.ln1_g(), stat(a.mu1()), stat(a.rs1()), dln, dx, dnorm, dnorm + h);
    norm_grads(gw + k.ln1_g());
    nn::add(dx, dx1, dx, int64_t(n) * h);
  });
}

#define SP_HYBRID_BLOCK(T)                                                                                     \
  template void block_forward<T>(const BlockAct&, const T*, const T*, T*, GroupComm<T>&, int, PhaseClock*);    \
  template void block_backward<T>(const BlockAct&, const T*, typename nn::AccOf<T>::type*, const T*, const T*, \
                                  const T*, T*, T*, GroupComm<T>&, int, bool, PhaseClock*);
SP_HYBRID_BLOCK(float)
SP_HYBRID_BLOCK(double)
SP_HYBRID_BLOCK(precision::fp16_t)
SP_HYBRID_BLOCK(precision::bf16_t)
#undef SP_HYBRID_BLOCK

const char* block_phase_gemm(bool backward, int i) {
  static constexpr const char* f[] = {"gemm.f0", "gemm.f1", "gemm.f2", "gemm.f3", "gemm.f4", "gemm.f5"};
  static constexpr const char* b[] = {"gemm.b0", "gemm.b1", "gemm.b2", "gemm.b3", "gemm.b4",  "gemm.b5",
                                      "gemm.b6", "gemm.b7", "gemm.b8", "gemm.b9", "gemm.b10", "gemm.b11"};
  return backward ? b[i] : f[i];
}

std::vector<BlockGemm> block_gemms_forward(const BlockAct& a) {
  const int n = a.r.n(), h = a.k.h, hl = a.k.hl(), fl = a.k.fl, s = a.r.s, d = a.k.d, bh = a.r.b * a.k.heads;
  const GemmOps NN = GemmOps::nn, NT = GemmOps::nt;
  return {{n, 3 * hl, h, 1, NN}, {s, s, d, bh, NT}, {s, d, s, bh, NN},  // QKV; Q K^T, P V
          {n, h, hl, 1, NN},     {n, fl, h, 1, NN}, {n, h, fl, 1, NN}};
}

std::vector<BlockGemm> block_gemms_backward(const BlockAct& a) {
  const int n = a.r.n(), h = a.k.h, hl = a.k.hl(), fl = a.k.fl, s = a.r.s, d = a.k.d, bh = a.r.b * a.k.heads;
  const GemmOps NN = GemmOps::nn, NT = GemmOps::nt, TN = GemmOps::tn;
  return {{n, fl, h, 1, NT},     {fl, h, n, 1, TN},    {h, fl, n, 1, TN},                     // dH, dW2, dW1
          {n, h, fl, 1, NT},     {n, hl, h, 1, NT},    {hl, h, n, 1, TN},                     // dX, dO, dWo
          {s, s, d, bh, NT},     {s, d, s, bh, NN},    {s, d, s, bh, TN}, {s, d, s, bh, TN},  // dP; dQ; dK, dV
          {h, 3 * hl, n, 1, TN}, {n, h, 3 * hl, 1, NT}};                                      // dWqkv, dX
}

}  // namespace sp::hybrid
