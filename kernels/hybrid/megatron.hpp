#pragma once
// The published accounting of a GPT-style model under Megatron-LM's
// tensor x pipeline x data parallelism (docs/planner.md):
//  - parameters (Narayanan et al. SC'21, sec. 5.1): per block
//    4h^2 + 2hf + 9h + f (12h^2 + 13h at f = 4h), plus (V + s) h of word
//    and position embeddings when the model has a vocabulary;
//  - model states per parameter, mixed-precision Adam: 2 bytes of 16-bit
//    weights, 4 of fp32 gradients (Megatron's 18 bytes/param) or 2 (ZeRO's
//    16), 12 of fp32 master weights and Adam moments; fp32 training 4+4+8;
//    ZeRO stage 1/2/3 divides optimizer / + gradients / + weights by dp
//    (Rajbhandari et al. SC'20);
//  - activations per block and micro-batch (Korthikanti et al. 2022,
//    Table 2), 16-bit: sbh(34 + 5as/h) without tensor parallelism,
//    sbh(10 + 24/t + 5as/(ht)) with it, (sbh/t)(34 + 5as/h) with sequence
//    parallelism, 2sbh (the block input) with full recomputation;
//  - FLOPs per step (Narayanan et al., eq. 3): every block's forward
//    B s (8h^2 + 4hf) + 4Bs^2h, backward twice that, recomputation one more
//    forward; the logit layer 2BshV forward, never recomputed;
//  - the pipeline bubble relative to ideal compute (p-1)/(v m).
// The stage that holds the embedding (pipeline rank 0) is the most loaded:
// its parameters are ((L/p) block + embedding) / t, as Megatron-LM's own
// memory estimate counts them.
#include "kernels/hybrid/layout.hpp"

namespace sp::hybrid::megatron {

double block_params(const ModelShape& m);      // one block's weights and biases
double embedding_params(const ModelShape& m);  // (V + s) h; 0 without a vocabulary
double param_count(const ModelShape& m);       // L blocks + embedding

// Bytes per parameter of the model states before ZeRO sharding.
struct StateBytes {
  double param = 2, grad = 4, optim = 12;
};
// 16-bit storage: 2 + (fp32_grads ? 4 : 2) + 12; fp32: 4 + 4 + 8.
StateBytes state_bytes(StorageType s, bool fp32_grads = true);

// Korthikanti et al. Table 2, bytes of one block's activations for one
// micro-batch of b sequences (16-bit).
enum class ActSplit { none, tp, tp_sp };
double act_per_block(const ModelShape& m, double b, int t, ActSplit split);
double act_full_recompute(const ModelShape& m, double b, int t, ActSplit split);  // 2sbh (/t with SP)

// Bytes on the most loaded rank (pipeline stage 0) of one layout.
struct Memory {
  double params = 0, grads = 0, optimizer = 0, activations = 0;
  double total() const { return params + grads + optimizer + activations; }
};
struct MemoryOptions {
  bool fp32_grads = true;         // Megatron's 18 bytes/param; false: ZeRO's 16
  ActSplit split = ActSplit::tp;  // the composed step has no sequence parallelism
};
// Activations: the schedule keeps mp::predicted_peak_stash(rank 0) chunk
// sets of L/(p v) blocks each. ckpt_every k = 0 stores every block's
// activations; k >= 1 stores one block input (2sbh, in the storage type) per
// started segment of k blocks, plus the full activations of the k blocks
// recomputed at once during the backward pass. fp32 storage doubles every
// 16-bit activation of the table (the planner's convention). The layout
// must pass layout_error().
Memory memory_per_gpu(const ModelShape& m, const Layout& l, const MemoryOptions& o = {});

// FLOPs of one step over all ranks; recompute: the forward passes of blocks
// run again (1 with any checkpointing, 0 without).
double flops_per_step(const ModelShape& m, double recompute);

// Pipeline bubble over ideal compute: (p-1)/m, (p-1)/(v m) interleaved.
double bubble_over_ideal(mp::ScheduleKind k, int p, int m, int v);

}  // namespace sp::hybrid::megatron
