#pragma once
// The layer library's rates in the order a training step runs its
// operations: one micro-batch forward through a chain of blocks, then
// backward through them (the way a pipeline chunk's F and B operations run
// its blocks), at the layout's micro-batch and tensor-parallel slice, in the
// storage type, on the step's own code (block_forward / block_backward with
// a clock: each operation fenced and timed under its phase). The products,
// the attention core and the element-wise passes then start from the caches
// the operations before them leave, as in the step; timed back to back on
// their own (step_gemm, step_attention) each finds its own state from the
// call before, and measures faster than the same call inside a pass. The
// figures: the FLOP/s of each GEMM shape and operand layout outside the
// attention core, the seconds of one forward and one backward call of the
// attention core, and the bytes per second of the element-wise passes (the
// cost model's count of them, block_elementwise_elems without softmax). The
// planner's verification predicts each layout from them (docs/planner.md,
// "Verification"). The calls are the measurement service's
// (per_call_seconds); this rank's figures, not a collective.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include "kernels/comm/transport.hpp"
#include "kernels/hybrid/block.hpp"
#include "kernels/hybrid/group_comm.hpp"
#include "scaleproof/kokkos_compat.hpp"
#include "scaleproof/measure.hpp"

namespace sp::hybrid {

inline constexpr const char* kElementwiseRateCounter = "elementwise_bytes_per_s";
inline constexpr const char* kAttentionForwardCounter = "attention_forward_s";
inline constexpr const char* kAttentionBackwardCounter = "attention_backward_s";
// The counter of one GEMM shape's rate: "gemm_flops_<M>x<N>x<K>_<ops>".
std::string pass_gemm_counter(const GemmShape::Key& key);

struct BlockPassFigures {
  std::map<GemmShape::Key, double> gemm_rate;  // FLOP/s per shape and operand layout
  double attention_forward_s = 0, attention_backward_s = 0;
  double elementwise_bw = 0;  // bytes per second
};

// The figures from a clock that recorded whole passes of blocks of layout
// `a`, elements of `elem_bytes` bytes: each GEMM phase's FLOPs over its
// seconds (phases of one shape pooled), the attention phases' seconds per
// call, the element-wise bytes of a block's forward and backward over the
// element-wise seconds per block. Phases the clock has no reading of are
// left out.
BlockPassFigures block_pass_figures(const PhaseClock& clock, const BlockAct& a, double elem_bytes);

// Distinct values (rows of nonzero variance) of magnitude `scale`, rounded
// once into T.
template <class T>
SP_UNIT_LOCAL void elementwise_fill(Kokkos::View<T*> v, int mod, float scale = 1.0f) {
  Kokkos::parallel_for(
      "ew_fill", Kokkos::RangePolicy<>(0, v.size()),
      KOKKOS_LAMBDA(const size_t i) { v(i) = nn::store_as<T>((float(i % size_t(mod)) * 0.125f - 1.0f) * scale, 0); });
}

// `chain` blocks of shape k on micro-batches of rows r, storage T: weights of
// magnitude 1/sqrt(h) (the step's initialisation's), a fixed output
// gradient, the weight gradients added into their accumulators
// (accumulate = true, as the step's B operations do but for ZeRO 2 and 3 on
// one replica). A group of one rank: the tensor-parallel all-reduces are the
// group's term of the model, not the layers'.
template <class T>
BlockPassFigures block_pass_rates(const BlockShape& k, const Rows& r, int chain) {
  using A = typename nn::AccOf<T>::type;
  const BlockAct a{k, r, acc_elems<T>()};
  const BlockScratch sc{k, r, acc_elems<T>()};
  const int64_t P = k.elems(), E = a.elems(), nh = int64_t(r.n()) * k.h;
  Kokkos::View<T*> w("bp_w", size_t(chain * P)), act("bp_act", size_t(chain * E)), x("bp_x", size_t(nh));
  Kokkos::View<T*> dy("bp_dy", size_t(nh)), scratch("bp_scratch", size_t(sc.elems() + 2 * nh));
  Kokkos::View<A*> gw("bp_gw", size_t(chain * P));
  elementwise_fill(w, 17, 1.0f / std::sqrt(float(k.h))), elementwise_fill(x, 13), elementwise_fill(dy, 11);
  Kokkos::fence();
  comm::SelfTransport self;
  dp::MemoryTracker mem;
  GroupComm<T> tp(self, mem);
  PhaseClock clock;
  PhaseClock* on = nullptr;
  auto pass = [&] {
    for (int j = 0; j < chain; ++j)
      block_forward<T>(a, w.data() + j * P, j == 0 ? x.data() : act.data() + (j - 1) * E + a.out(), act.data() + j * E,
                       tp, 1, on);
    T* grads[2] = {scratch.data() + sc.elems(), scratch.data() + sc.elems() + nh};
    const T* g = dy.data();
    for (int j = chain - 1; j >= 0; --j) {
      T* dx = grads[j % 2];
      block_backward<T>(a, w.data() + j * P, gw.data() + j * P, j == 0 ? x.data() : act.data() + (j - 1) * E + a.out(),
                        act.data() + j * E, g, dx, scratch.data(), tp, 1, true, on);
      g = dx;
    }
    Kokkos::fence();
  };
  pass();  // first touch and warm-up, untimed
  on = &clock;
  per_call_seconds(pass);
  return block_pass_figures(clock, a, double(sizeof(T)));
}

}  // namespace sp::hybrid
