#pragma once
// What one step of the composed hybrid-parallel training costs, predicted
// from the model shape and the layout alone: memory per rank by category at
// its peak, bytes each group's collectives move, point-to-point traffic of the
// pipeline, and the step's FLOPs. The predictions describe the composed step
// exactly (the step counts the same quantities from its objects and its
// transports, and the verdicts compare the two), so any change to what the
// step stores or sends changes this model in the same commit.
#include <cstdint>

#include <vector>

#include "kernels/hybrid/layout.hpp"
#include "kernels/hybrid/time_model.hpp"

namespace sp::hybrid {

// Bytes held by one rank, each category at its own peak during the step.
struct MemoryByCategory {
  double params = 0;        // stored parameters (storage type; the gathered ZeRO-3 working copy included)
  double grads = 0;         // gradients (fp32 accumulators with 16-bit storage)
  double optimizer = 0;     // optimizer state and fp32 master weights
  double activations = 0;   // stashed activations and checkpoints at the schedule's peak
  double comm_buffers = 0;  // send/receive and staging buffers of the collectives and of the pipeline
  double total() const { return params + grads + optimizer + activations + comm_buffers; }
};

// Bytes one rank sends per step, per group, and the pipeline's messages.
struct TrafficPerStep {
  double dp_bytes = 0;  // gradient reduction and ZeRO gathers over the data-parallel group
  double tp_bytes = 0;  // tensor-parallel all-reduces inside the blocks
  double pp_bytes = 0;  // activations and gradients between pipeline stages
  int64_t dp_collectives = 0, tp_collectives = 0;
  int64_t pp_messages = 0;
};

// `rank` is the world rank; its coordinates in the (dp, tp, pp) grid decide
// which stage, chunks and shard it holds. The layout must pass layout_error().
MemoryByCategory predict_memory(const ModelShape& m, const Layout& l, int rank);
TrafficPerStep predict_traffic(const ModelShape& m, const Layout& l, int rank);
// Floating-point operations of one step on one rank (forward, backward and,
// with checkpointing, the recomputed forward), the GEMMs' 2*M*N*K each.
double predict_flops(const ModelShape& m, const Layout& l, int rank);
// The same products by shape: every distinct (M, N, K, operand layout)
// once with its count per step (the blocks' GEMMs and the attention's
// batched products, one count per product of the batch), ordered by
// GemmShape::key(). Their FLOPs sum to predict_flops().
std::vector<GemmShape> predict_gemms(const ModelShape& m, const Layout& l, int rank);
// The attention core's calls per step on this rank and their softmax bytes
// (a part of predict_gemms' products and predict_elementwise_bytes' bytes).
AttentionWork predict_attention(const ModelShape& m, const Layout& l, int rank);
// Bytes the element-wise passes of one step's schedule read and write on
// this rank, each operand counted once per pass (docs/planner.md, "Time
// model"): layer norms, softmax, GeLU and residual adds of every block
// (forward, backward and recomputed forward) and the loss gradient on the
// last stage.
double predict_elementwise_bytes(const ModelShape& m, const Layout& l, int rank);
// Bytes the schedule's passes over this rank's ZeRO shard read and write:
// from stage 2 each B op's reduced shard added into the accumulated one,
// at stage 3 each F and B op's copy of the rank's parameter shard into the
// all-gather's buffer. Arrays of parameters, not activations: they stream
// as the optimizer's do.
double predict_shard_bytes(const ModelShape& m, const Layout& l, int rank);

// The elements the phase after the schedule streams on one rank: those its
// Adam updates (its ZeRO 1-3 shard of every chunk, else every chunk) and its
// gradient accumulators (shards from ZeRO 2 on).
struct OptimizerElems {
  double updated = 0, grads = 0;
};
OptimizerElems optimizer_elems(const ModelShape& m, const Layout& l, int rank);
// Bytes that phase's kernels read and write (docs/planner.md, "Time model"):
// with 16-bit storage the gradients' unscaling (read, write) and inf/NaN
// count (read); Adam (read parameter - the fp32 master with 16-bit storage -
// gradient and both moments, write parameter and moments); with 16-bit
// storage the rounded working copy (read master, write parameter); the
// gradients zeroed for the next step (write). What predict_optimizer_bytes
// counts and what the optimizer's rate is measured on.
double optimizer_phase_bytes(const OptimizerElems& e, StorageType storage);
double predict_optimizer_bytes(const ModelShape& m, const Layout& l, int rank);

// Elements one block's element-wise passes read and write on one micro-batch
// of n rows (width h, local MLP width fl, `probs` softmax elements), forward
// and backward (docs/planner.md, "Time model"): the count
// predict_elementwise_bytes sums, and what the element-wise rate is measured
// on (probs = 0 there: softmax runs inside the attention core).
struct BlockElementwise {
  double fwd = 0, bwd = 0;
};
BlockElementwise block_elementwise_elems(double n, double h, double fl, double probs);

}  // namespace sp::hybrid
