#pragma once
// The shape of a GPT-style stack and of one hybrid-parallel layout of it:
// world = dp * tp * pp ranks, tensor parallelism inside every block (Megatron
// column/row split of attention and MLP), a pipeline schedule over pp stages
// (v virtual chunks per stage when interleaved), ZeRO over the data-parallel
// group, optional fp16/bf16 storage and activation checkpointing.
//
// This header is the one place for the rules a layout must satisfy; the
// composed step, its technique declaration and the planner all call
// layout_error() and never restate a rule.
#include <string>

#include "kernels/modelparallel/schedule.hpp"

namespace sp::hybrid {

// Embedding-free transformer: `layers` blocks of (LN, attention, LN, MLP) on
// [batch, seq, hidden] activations, MLP width ffn (4 * hidden by default).
struct ModelShape {
  int layers = 2;
  int hidden = 16;
  int heads = 2;
  int seq = 4;
  int ffn = 0;           // 0 means 4 * hidden
  int vocab = 0;         // planner only: output layer hidden x vocab (0 = none)
  int global_batch = 4;  // sequences per step, over all data-parallel replicas
  int ffn_width() const { return ffn > 0 ? ffn : 4 * hidden; }
};

// fp64: the whole step in double (no master copy), the precision whose
// running error bound stays far below the values through a deep stack, so
// the conformance tests use it.
enum class StorageType { fp32, fp16, bf16, fp64 };

struct Layout {
  int dp = 1, tp = 1, pp = 1;
  int v = 1;              // virtual chunks per stage (interleaved only)
  int micro_batches = 1;  // per data-parallel replica and step
  mp::ScheduleKind schedule = mp::ScheduleKind::one_f_one_b;
  int zero_stage = 0;                       // 0 (plain data parallelism) .. 3
  StorageType storage = StorageType::fp32;  // fp16/bf16: fp32 master weights, dynamic loss scaling
  int ckpt_every = 0;                       // 0: keep every activation; k: recompute, keeping each k-th block's input
  int world() const { return dp * tp * pp; }
  int micro_batch_size(const ModelShape& m) const { return m.global_batch / (dp * micro_batches); }
};

// An empty string when the layout is valid for the model on `world` ranks,
// else one line naming the first rule broken:
//   dp, tp, pp, v, micro_batches >= 1; dp * tp * pp == world;
//   heads % tp == 0 and ffn % tp == 0 (whole heads and MLP columns per rank);
//   hidden % heads == 0;
//   v == 1 unless the schedule is interleaved; interleaved needs
//   micro_batches % pp == 0; layers % (pp * v) == 0 (equal chunks);
//   global_batch % (dp * micro_batches) == 0;
//   zero_stage in 0..3; ckpt_every in 0..layers/(pp*v) (within one chunk).
std::string layout_error(const ModelShape& m, const Layout& l, int world);

// Grid coordinates of a world rank: tensor-parallel ranks are adjacent
// (rank = ((pp_i * dp) + dp_i) * tp + tp_i), as Megatron-LM orders them so
// the most frequent collectives stay inside a node.
struct GridCoord {
  int dp = 0, tp = 0, pp = 0;
};
GridCoord grid_coord(const Layout& l, int rank);

const char* to_string(StorageType s);
double element_bytes(StorageType s);              // bytes of one stored element: 8, 4, or 2 for fp16 and bf16
StorageType parse_storage(const std::string& s);  // fp32 | fp16 | bf16 | fp64; throws sp::InputError

}  // namespace sp::hybrid
