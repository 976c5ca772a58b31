#pragma once
// Fully connected layer Y = X W' + b over a batch (rows of X and Y), on
// nn::gemm. W' is W^T when W is stored [out x in] (PyTorch's nn.Linear) and
// W when stored [in x out] (Megatron-LM's layers). Backward:
//   dX = dY W'^T (batch x in), dW' = X^T dY, db = sum over the batch of dY.
// FLOPs: forward 2 B in out; each of dX and dW another 2 B in out.
// Bounds: nn/gemm.hpp's gamma_K |A||B| with K = in (forward, plus the bias
// as one more term), out (dX), batch (dW, db).
#include <Kokkos_Core.hpp>
#include <string>
#include <type_traits>

#include "kernels/nn/gemm.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::nn {

enum class Weights { out_in, in_out };

struct LinearShape {
  int batch, in, out;
  Weights w = Weights::out_in;
  int64_t ldw() const { return w == Weights::out_in ? in : out; }
  Op fwd() const { return w == Weights::out_in ? Op::T : Op::N; }  // W' = op(W)
  Op bwd() const { return w == Weights::out_in ? Op::N : Op::T; }  // W'^T
};

// Y (batch x out) = X W' (+ b when b is not null: added to the accumulated
// product, then rounded once into S).
template <class S>
SP_UNIT_LOCAL void linear_forward(const LinearShape& sh, const S* X, const S* W, const S* b, S* Y) {
  using Acc = typename AccOf<S>::type;
  if (!b) {
    gemm(Op::N, sh.fwd(), sh.batch, sh.out, sh.in, X, sh.in, W, sh.ldw(), Y, sh.out);
    return;
  }
  const int out = sh.out;
  const int64_t n = int64_t(sh.batch) * out;
  Kokkos::View<Acc*> acc;
  Acc* z = reinterpret_cast<Acc*>(Y);
  if constexpr (!std::is_same<S, Acc>::value) {
    acc = Kokkos::View<Acc*>(Kokkos::view_alloc(std::string("nn_linear_acc"), Kokkos::WithoutInitializing), n);
    z = acc.data();
  }
  gemm(Op::N, sh.fwd(), sh.batch, sh.out, sh.in, X, sh.in, W, sh.ldw(), z, sh.out);
  if constexpr (kHostMemory) {  // a row per iteration: no index division, an inner loop that vectorises
    Kokkos::parallel_for(
        "nn_bias", Kokkos::RangePolicy<>(0, sh.batch), KOKKOS_LAMBDA(const int r) {
          const int64_t o = int64_t(r) * out;
#pragma omp simd
          for (int j = 0; j < out; ++j) Y[o + j] = store_as<S>(z[o + j] + load(b[j]), 0);
        });
  } else {
    Kokkos::parallel_for(
        "nn_bias", Kokkos::RangePolicy<>(0, n),
        KOKKOS_LAMBDA(const int64_t i) { Y[i] = store_as<S>(z[i] + load(b[i % out]), 0); });
  }
}

// dX (batch x in) = dY W'^T.
template <class SY, class SW, class SX>
void linear_backward_input(const LinearShape& sh, const SY* dY, const SW* W, SX* dX, bool accumulate = false) {
  gemm(Op::N, sh.bwd(), sh.batch, sh.in, sh.out, dY, sh.out, W, sh.ldw(), dX, sh.in, accumulate);
}

// The weight gradient of the output features [lo, hi) (rows of an [out x in]
// W, columns of an [in x out] one): dW' = X^T dY; db[j] = sum_b dY[b][j]
// when db is not null. Accumulating adds to dW (micro-batches).
template <class SX, class SY, class SW>
SP_UNIT_LOCAL void linear_backward_weight(const LinearShape& sh, const SX* X, const SY* dY, SW* dW, SW* db, int lo,
                                          int hi, bool accumulate = false) {
  const int n = hi - lo;
  if (n <= 0) return;
  if (sh.w == Weights::out_in)  // dW[lo:hi, :] = dY[:, lo:hi]^T X
    gemm(Op::T, Op::N, n, sh.in, sh.batch, dY + lo, sh.out, X, sh.in, dW + int64_t(lo) * sh.in, sh.in, accumulate);
  else  // dW[:, lo:hi] = X^T dY[:, lo:hi]
    gemm(Op::T, Op::N, sh.in, n, sh.batch, X, sh.in, dY + lo, sh.out, dW + lo, sh.out, accumulate);
  if (!db) return;
  using Acc = typename AccOf<SW>::type;
  const int batch = sh.batch, out = sh.out;
  if constexpr (kHostMemory) {
    // A block of kCols columns per iteration, the batch rows in order and the
    // columns innermost (contiguous, vectorised): each db[j] is the same sum
    // in the same order as one column at a time.
    constexpr int kCols = 64;
    Kokkos::parallel_for(
        "nn_bias_grad", Kokkos::RangePolicy<>(0, (n + kCols - 1) / kCols), KOKKOS_LAMBDA(const int blk) {
          const int j0 = lo + blk * kCols, w = hi - j0 < kCols ? hi - j0 : kCols;
          Acc s[kCols];
          for (int c = 0; c < w; ++c) s[c] = accumulate ? load(db[j0 + c]) : Acc(0);
          for (int b = 0; b < batch; ++b) {
            const SY* row = dY + int64_t(b) * out + j0;
#pragma omp simd
            for (int c = 0; c < w; ++c) s[c] += load(row[c]);
          }
          for (int c = 0; c < w; ++c) db[j0 + c] = store_as<SW>(s[c], 0);
        });
  } else {
    Kokkos::parallel_for(
        "nn_bias_grad", Kokkos::RangePolicy<>(lo, hi), KOKKOS_LAMBDA(const int j) {
          Acc s = accumulate ? load(db[j]) : Acc(0);
          for (int b = 0; b < batch; ++b) s += load(dY[int64_t(b) * out + j]);
          db[j] = store_as<SW>(s, 0);
        });
  }
}

}  // namespace sp::nn
