#pragma once
// Forward and backward of one tensor-parallel transformer block on one
// micro-batch (n = b s token rows of width h), on the layer library
// (kernels/nn: GEMM, layer norm, GeLU, residual adds) and the attention core
// of kernels/modelparallel, in the storage type T (fp32, fp64, fp16 or bf16;
// 16-bit storage computes in fp32 and rounds each stored result once, its
// weight gradients accumulate in fp32). The two conjugate tensor-parallel
// all-reduces (Megatron-LM's g after each row-parallel product in forward,
// f before each column-parallel input gradient in backward) go to the
// tensor-parallel group: two per block each way.
//
// A block's activations live in one buffer laid out by BlockAct; its
// backward scratch in one laid out by BlockScratch.
#include <cstdint>
#include <vector>

#include "kernels/hybrid/block_shape.hpp"
#include "kernels/hybrid/group_comm.hpp"
#include "kernels/hybrid/time_model.hpp"  // GemmOps
#include "kernels/nn/gemm.hpp"

namespace sp {
class PhaseClock;
}

namespace sp::hybrid {

struct Rows {
  int b = 1, s = 1;  // samples of the micro-batch, sequence length
  int n() const { return b * s; }
};

// Offsets of one block's stashed activations, in elements of the storage
// type. The layer norms' statistics (mean, rstd per row) are kept in the
// accumulation type, `st` storage elements each (1 for fp32 and fp64, 2 for
// 16-bit storage); they come first and the total is a multiple of st, so
// that every statistic is aligned in a buffer of whole BlockActs.
struct BlockAct {
  BlockShape k;
  Rows r;
  int st = 1;
  int64_t n() const { return r.n(); }
  int64_t probs() const { return int64_t(r.b) * k.heads * r.s * r.s; }
  int64_t mu1() const { return 0; }
  int64_t rs1() const { return mu1() + st * n(); }
  int64_t mu2() const { return rs1() + st * n(); }
  int64_t rs2() const { return mu2() + st * n(); }
  int64_t ln1() const { return rs2() + st * n(); }
  int64_t qkv() const { return ln1() + n() * k.h; }
  int64_t p() const { return qkv() + n() * 3 * k.hl(); }
  int64_t o() const { return p() + probs(); }
  int64_t x1() const { return o() + n() * k.hl(); }
  int64_t ln2() const { return x1() + n() * k.h; }
  int64_t z() const { return ln2() + n() * k.h; }
  int64_t hh() const { return z() + n() * k.fl; }
  int64_t out() const { return hh() + n() * k.fl; }
  // n (4h + 4 st + 4 hl + 2 fl) + b heads s^2, rounded up to a multiple of st
  int64_t elems() const { return (out() + n() * k.h + st - 1) / st * st; }
};

// Offsets of the backward's scratch (elements of the storage type); the
// layer-norm parameter gradients (2h, accumulation type) first.
struct BlockScratch {
  BlockShape k;
  Rows r;
  int st = 1;
  int64_t n() const { return r.n(); }
  int64_t dnorm() const { return 0; }  // LN gamma and beta gradients, 2h values of st elements
  int64_t dln() const { return dnorm() + 2 * int64_t(st) * k.h; }
  int64_t dx1() const { return dln() + n() * k.h; }
  int64_t dz() const { return dx1() + n() * k.h; }
  int64_t dout() const { return dz() + n() * k.fl; }
  int64_t ds() const { return dout() + n() * k.hl(); }
  int64_t dqkv() const { return ds() + int64_t(r.b) * k.heads * r.s * r.s; }
  int64_t elems() const { return dqkv() + n() * 3 * k.hl(); }  // n (2h + fl + 4 hl) + b heads s^2 + 2 st h
};

// Storage elements per accumulation-type value: 1, or 2 for 16-bit storage.
template <class S>
constexpr int acc_elems() {
  return int(sizeof(typename nn::AccOf<S>::type) / sizeof(S));
}

// Layer norm epsilon, rounded to T where used.
constexpr double kLnEps = 1e-5;

// act (BlockAct layout) := the block's activations for input x; the output
// is act + out(). w: the block's parameters (BlockShape offsets).
// split: 1 on a tensor-parallel group of any size; p > 1 only on a group of
// one rank holding the whole block, which then forms each of the four summed
// products (after Wo and W2, the input gradients of LN2's and LN1's outputs)
// as p ranks of a split of p would - p partial products over their slices,
// each rounded to T, added in the ring all-reduce's order - so that its
// result is bitwise that of the split (the one-rank reference of a
// tensor-parallel layout, docs/hybrid.md).
//
// clock: when given, each operation is fenced and timed under its phase
// (block_phase_gemm, kPhaseAttention*, kPhaseElementwise), in the order the
// pass runs them: the planner's calibration of the layer library's rates in
// the sequence a training step runs them (suites/hybrid/block_pass_rates.hpp).
template <class T>
void block_forward(const BlockAct& a, const T* w, const T* x, T* act, GroupComm<T>& tp, int split = 1,
                   PhaseClock* clock = nullptr);

// dx := the input gradient for output gradient dy; the weight gradients are
// added to gw (BlockShape offsets, accumulation type), or with accumulate =
// false written there (every element of the block's vector is written, so gw
// need not be initialised; the values are those added to zero). dx must not
// alias dy.
template <class T>
void block_backward(const BlockAct& a, const T* w, typename nn::AccOf<T>::type* gw, const T* x, const T* act,
                    const T* dy, T* dx, T* scratch, GroupComm<T>& tp, int split = 1, bool accumulate = true,
                    PhaseClock* clock = nullptr);

// The matrix products of one block's forward (3 GEMMs and the 2 batched
// attention products) and backward, as (M, N, K, count) of 2 M N K FLOPs,
// with the operand layout each runs in (block.cpp's nn::gemm calls; the
// attention core's as their formulas read).
struct BlockGemm {
  int m, n, k, count;
  GemmOps ops;
};
std::vector<BlockGemm> block_gemms_forward(const BlockAct& a);
std::vector<BlockGemm> block_gemms_backward(const BlockAct& a);

// The phases a clocked pass records: the GEMM at position i of
// block_gemms_forward (backward = false) or block_gemms_backward, outside
// the attention core ("gemm.f0", "gemm.b11"); the attention core's forward
// and backward call; every element-wise operation (layer norms, GeLU,
// residual adds, the layer norms' parameter gradients).
const char* block_phase_gemm(bool backward, int i);
inline constexpr const char* kPhaseAttentionForward = "attention.f";
inline constexpr const char* kPhaseAttentionBackward = "attention.b";
inline constexpr const char* kPhaseElementwise = "elementwise";

}  // namespace sp::hybrid
