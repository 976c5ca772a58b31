#pragma once
// One transformer block as a tensor-parallel rank holds it: the sizes of its
// local slices and where each parameter tensor sits in the block's flat
// parameter vector (gradients use the same offsets). A block is
//   x1 = x + Attn(LN1(x)) Wo,   y = x1 + GeLU(LN2(x1) W1) W2
// without biases; Attn's QKV projection is [h, 3h] split by columns into
// whole heads (rank i: columns of heads i*H/tp .. of each of Q, K, V), Wo
// [h, h] and W2 [f, h] split by rows, W1 [h, f] by columns (Megatron-LM).
// Layer-norm parameters are replicated over the tensor-parallel group.
#include <cstdint>

#include "kernels/hybrid/layout.hpp"

namespace sp::hybrid {

struct BlockShape {
  int h = 0, heads = 0, d = 0;  // hidden, local heads, head size
  int fl = 0;                   // local MLP width (ffn / tp)
  int hl() const { return heads * d; }
  // Offsets (elements) in the block's flat vector, in this order.
  int64_t ln1_g() const { return 0; }
  int64_t ln1_b() const { return h; }
  int64_t wqkv() const { return 2 * int64_t(h); }                // [h, 3 hl]: local Q | K | V columns
  int64_t wo() const { return wqkv() + int64_t(h) * 3 * hl(); }  // [hl, h]
  int64_t ln2_g() const { return wo() + int64_t(hl()) * h; }
  int64_t ln2_b() const { return ln2_g() + h; }
  int64_t w1() const { return ln2_b() + h; }                // [h, fl]
  int64_t w2() const { return w1() + int64_t(h) * fl; }     // [fl, h]
  int64_t elems() const { return w2() + int64_t(fl) * h; }  // 4h + 4 h hl + 2 h fl
};

inline BlockShape block_shape(const ModelShape& m, const Layout& l) {
  BlockShape b;
  b.h = m.hidden;
  b.heads = m.heads / l.tp;
  b.d = m.hidden / m.heads;
  b.fl = m.ffn_width() / l.tp;
  return b;
}

// Blocks per pipeline chunk, and chunks per pipeline rank.
inline int blocks_per_chunk(const ModelShape& m, const Layout& l) { return m.layers / (l.pp * l.v); }

}  // namespace sp::hybrid
