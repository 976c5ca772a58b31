#pragma once
// A stack of L linear + ReLU blocks, y <- max(y W_l, 0) with W_l (H x H),
// on the layer library (docs/compression.md). Cross-layer parameter
// sharing (Lan et al. 2020, ALBERT) passes the same W for every l: L times
// fewer weight bytes, the same 2 B H^2 L FLOPs.
#include <Kokkos_Core.hpp>
#include <vector>

#include "kernels/nn/activations.hpp"
#include "kernels/nn/gemm.hpp"
#include "kernels/precision/flop_count.hpp"

namespace sp::precision {

// Runs the stack on X (B x H) with ping-pong buffers a and b (B x H each);
// returns the buffer that holds the output.
inline float* stack_forward(int B, int H, const float* X, const std::vector<const float*>& weights, float* a, float* b,
                            FlopCount* count = nullptr) {
  const float* in = X;
  float* out = a;
  for (const float* w : weights) {
    nn::gemm(nn::Op::N, nn::Op::N, B, H, H, in, H, w, H, out, H);
    nn::relu_forward(out, int64_t(B) * H);
    if (count) count->add(B, H, H);
    in = out;
    out = out == a ? b : a;
  }
  return const_cast<float*>(in);
}

}  // namespace sp::precision
