#pragma once
// Where an element of a tensor-parallel rank's block vector (BlockShape
// offsets) sits in the full model: tensor, row and column of the unsplit
// [rows, cols] matrix. Used to fill a rank's slice from the model's initial
// values and to compare it with the single-rank reference.
#include <cstdint>

#include "kernels/hybrid/block_shape.hpp"
#include "kernels/hybrid/model_init.hpp"

namespace sp::hybrid {

struct ParamPos {
  Tensor t;
  int64_t i, j;
  int rows;  // rows of the full tensor (its fan-in)
};

// tp: the tensor-parallel group size, tp_rank: this rank's coordinate in it.
inline ParamPos param_pos(const BlockShape& k, int tp, int tp_rank, int64_t off) {
  const int64_t h = k.h, hl = k.hl(), fl = k.fl;
  if (off < k.ln1_b()) return {Tensor::ln1_g, 0, off, 1};
  if (off < k.wqkv()) return {Tensor::ln1_b, 0, off - k.ln1_b(), 1};
  if (off < k.wo()) {
    const int64_t x = off - k.wqkv(), row = x / (3 * hl), col = x % (3 * hl);
    const Tensor t = col < hl ? Tensor::wq : col < 2 * hl ? Tensor::wk : Tensor::wv;
    return {t, row, tp_rank * hl + col % hl, int(h)};
  }
  if (off < k.ln2_g()) {
    const int64_t x = off - k.wo();
    return {Tensor::wo, tp_rank * hl + x / h, x % h, int(h)};
  }
  if (off < k.ln2_b()) return {Tensor::ln2_g, 0, off - k.ln2_g(), 1};
  if (off < k.w1()) return {Tensor::ln2_b, 0, off - k.ln2_b(), 1};
  if (off < k.w2()) {
    const int64_t x = off - k.w1();
    return {Tensor::w1, x / fl, tp_rank * fl + x % fl, int(h)};
  }
  const int64_t x = off - k.w2();
  return {Tensor::w2, tp_rank * fl + x / h, x % h, int(fl * tp)};
}

}  // namespace sp::hybrid
