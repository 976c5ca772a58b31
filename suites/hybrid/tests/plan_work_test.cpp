// The work description the planner's time model runs on: the GEMM shapes
// with their counts, the element-wise bytes of one step's schedule and the
// bytes of the phase after it, against counts made by hand from the block's
// passes and the optimizer's kernels (docs/planner.md, "Time model").
#include <gtest/gtest.h>

#include <tuple>

#include "kernels/hybrid/cost_model.hpp"

namespace {

using namespace sp::hybrid;

// 2 blocks, hidden 8, 2 heads of 4, 8 tokens, batch 4; MLP width 32.
ModelShape tiny() {
  ModelShape m;
  m.layers = 2, m.hidden = 8, m.heads = 2, m.seq = 8, m.global_batch = 4;
  return m;
}

// Elements one block's passes read and write on one micro-batch of 2
// samples (n = 16 rows, h = 8, f = 32, 2 x 2 x 8 x 8 = 256 softmax elements).
// Forward: 2 layer norms (x in, y out, mean and 1/std out), softmax in and
// out, GeLU in and out, 2 adds (2 in, 1 out).
constexpr double kFwd = 2 * (2 * 16 * 8 + 2 * 16) + 2 * 256 + 2 * 16 * 32 + 2 * 3 * 16 * 8;
// Backward: 2 layer norms (x, dy, mean, 1/std in, dx out, the 2h parameter
// gradients out and added in: 3 x 2h), softmax's 3 x 256, GeLU's 3 x 16 x 32,
// 2 adds.
constexpr double kBwd = 2 * (3 * 16 * 8 + 2 * 16 + 2 * 8 + 3 * 2 * 8) + 3 * 256 + 3 * 16 * 32 + 2 * 3 * 16 * 8;
constexpr double kBlockParams = 4 * 8 + 4 * 8 * 8 + 2 * 8 * 32;  // 800

TEST(PlanWork, HandCountsOfOneBlockPass) {
  EXPECT_EQ(kFwd, 2880.0);
  EXPECT_EQ(kBwd, 4032.0);
  EXPECT_EQ(kBlockParams, 800.0);
}

TEST(PlanWork, ElementwiseBytesAreTheBlocksAndLossByHand) {
  const ModelShape m = tiny();
  Layout l;  // dp = tp = pp = 1, fp32 (4 bytes)
  l.micro_batches = 2;
  // 2 micro-batches x 2 blocks; loss: 2 x 3 x (16 x 8).
  const double plain = 4 * (kFwd + kBwd) + 2 * 3 * 128;
  EXPECT_EQ(plain, 28416.0);
  EXPECT_EQ(predict_elementwise_bytes(m, l, 0), 4 * plain);

  // Checkpointing recomputes every block's forward once more.
  Layout ck = l;
  ck.ckpt_every = 1;
  EXPECT_EQ(predict_elementwise_bytes(m, ck, 0), 4 * (plain + 4 * kFwd));

  // fp64 storage doubles every byte.
  Layout f64 = l;
  f64.storage = StorageType::fp64;
  EXPECT_EQ(predict_elementwise_bytes(m, f64, 0), 8 * plain);

  // Two pipeline stages of one block each: only the last has the loss.
  Layout pp = l;
  pp.pp = 2;
  const double stage = 2 * (kFwd + kBwd);
  EXPECT_EQ(predict_elementwise_bytes(m, pp, 0), 4 * stage);
  EXPECT_EQ(predict_elementwise_bytes(m, pp, 1), 4 * (stage + 2 * 3 * 128));

  // ZeRO-1 over 2 data-parallel ranks: 1 micro-batch of 2 samples each.
  Layout z = l;
  z.dp = 2, z.micro_batches = 1, z.zero_stage = 1;
  EXPECT_EQ(predict_elementwise_bytes(m, z, 0), 4 * (2 * (kFwd + kBwd) + 3 * 128));

  EXPECT_EQ(predict_shard_bytes(m, z, 0), 0.0);

  // ZeRO-2: the B op's blocks write their layer-norm parameter gradients
  // (2 norms x 2h = 32 elements a block, 2 blocks) instead of adding them in,
  // one read fewer each; the op's reduce-scattered shard (800) is added into
  // the accumulated one: 3 x 800 elements of 4 bytes, a shard pass.
  Layout z2 = z;
  z2.zero_stage = 2;
  const double zero2 = 2 * (kFwd + kBwd) + 3 * 128 - 2 * 32;
  EXPECT_EQ(predict_elementwise_bytes(m, z2, 0), 4 * zero2);
  EXPECT_EQ(predict_shard_bytes(m, z2, 0), 4 * 3 * 800.0);
  // In bf16 storage the element-wise passes move 2 bytes an element, the
  // gradient shard's add still 4 (fp32 gradients).
  Layout z2h = z2;
  z2h.storage = StorageType::bf16;
  EXPECT_EQ(predict_elementwise_bytes(m, z2h, 0), 2 * zero2);
  EXPECT_EQ(predict_shard_bytes(m, z2h, 0), 4 * 3 * 800.0);
  // ZeRO-3: the F op and the B op each copy this rank's 800 parameters
  // into the all-gather's buffer first (read and write, storage type).
  Layout z3 = z2;
  z3.zero_stage = 3;
  EXPECT_EQ(predict_elementwise_bytes(m, z3, 0), 4 * zero2);
  EXPECT_EQ(predict_shard_bytes(m, z3, 0), 4 * 2 * 2 * 800.0 + 4 * 3 * 800.0);
  z3.storage = StorageType::bf16;
  EXPECT_EQ(predict_shard_bytes(m, z3, 0), 2 * 2 * 2 * 800.0 + 4 * 3 * 800.0);
}

TEST(PlanWork, OptimizerBytesAreAdamTheZeroFillAndTheMixedPrecisionPassesByHand) {
  const ModelShape m = tiny();  // 2 blocks of 800 parameters
  Layout l;
  // fp32: Adam reads parameter, gradient and both moments and writes three
  // of them over 1600 elements; the 1600 gradients are zeroed; 4 bytes each.
  EXPECT_EQ(predict_optimizer_bytes(m, l, 0), 4 * (7 * 1600.0 + 1600));
  Layout f64 = l;
  f64.storage = StorageType::fp64;
  EXPECT_EQ(predict_optimizer_bytes(m, f64, 0), 8 * (7 * 1600.0 + 1600));
  // Two stages: each updates and zeroes its own block.
  Layout pp = l;
  pp.pp = 2;
  EXPECT_EQ(predict_optimizer_bytes(m, pp, 1), 4 * (7 * 800.0 + 800));
  // ZeRO-1 over 2 ranks: Adam over this rank's 800, all 1600 gradients zeroed;
  // ZeRO-2: the gradients are a shard too.
  Layout z = l;
  z.dp = 2, z.zero_stage = 1;
  EXPECT_EQ(predict_optimizer_bytes(m, z, 1), 4 * (7 * 800.0 + 1600));
  z.zero_stage = 2;
  EXPECT_EQ(predict_optimizer_bytes(m, z, 1), 4 * (7 * 800.0 + 800));
  // bf16 storage, ZeRO-1: the fp32 gradients unscaled (read, write) and
  // counted (read), Adam on the fp32 master, the master read and the bf16
  // parameter written, the gradients zeroed.
  Layout h = l;
  h.dp = 2, h.zero_stage = 1, h.storage = StorageType::bf16;
  EXPECT_EQ(predict_optimizer_bytes(m, h, 0), 4 * 3 * 1600.0 + 4 * 7 * 800.0 + (4 + 2) * 800.0 + 4 * 1600.0);
  EXPECT_EQ(optimizer_elems(m, h, 0).updated, 800.0);
  EXPECT_EQ(optimizer_elems(m, h, 0).grads, 1600.0);
}

TEST(PlanWork, GemmShapesAreDistinctCountedAndSumToTheFlops) {
  const ModelShape m = tiny();
  for (int ckpt : {0, 1})
    for (int tp : {1, 2}) {
      Layout l;
      l.micro_batches = 2, l.tp = tp, l.ckpt_every = ckpt;
      const std::vector<GemmShape> g = predict_gemms(m, l, 0);
      double flops = 0;
      for (size_t i = 0; i < g.size(); ++i) {
        flops += g[i].flops();
        if (i > 0) EXPECT_LT(g[i - 1].key(), g[i].key()) << "each shape once, ordered";
      }
      StepWork w;
      w.gemms = g;
      EXPECT_DOUBLE_EQ(flops, predict_flops(m, l, 0)) << tp << " " << ckpt;
      EXPECT_EQ(flops, total_flops(w));
    }
  // By hand at tp = 1, no checkpointing: 2 micro-batches x 2 blocks = 4
  // block passes each way; per pass 2 x 2 (sample, head) products of each
  // attention shape forward (Q K^T as A B^T, P V as A B); backward one more
  // of the first (dP = dO V^T) and three of the second (dQ = dS K as A B,
  // dK = dS^T Q and dV = P^T dO as A^T B). The blocks' backward products
  // read a weight transposed (input gradients, A B^T) or an activation
  // transposed (weight gradients, A^T B).
  Layout l;
  l.micro_batches = 2;
  const GemmOps NN = GemmOps::nn, NT = GemmOps::nt, TN = GemmOps::tn;
  auto count = [&](int64_t M, int64_t N, int64_t K, GemmOps ops) {
    for (const GemmShape& g : predict_gemms(m, l, 0))
      if (g.m == M && g.n == N && g.k == K && g.ops == ops) return g.count;
    return 0.0;
  };
  EXPECT_EQ(count(8, 8, 4, NT), 4 * (4 + 4));
  EXPECT_EQ(count(8, 8, 4, NN), 0.0);
  EXPECT_EQ(count(8, 4, 8, NN), 4 * (4 + 4));
  EXPECT_EQ(count(8, 4, 8, TN), 4 * (2 * 4));
  EXPECT_EQ(count(16, 24, 8, NN), 4.0);  // QKV forward: n x 3h x h
  EXPECT_EQ(count(16, 32, 8, NN), 4.0);  // W1 forward: n x f x h
  EXPECT_EQ(count(16, 32, 8, NT), 4.0);  // dH = dy W2^T
  EXPECT_EQ(count(32, 8, 16, TN), 4.0);  // dW2 = H^T dy: f x h x n
  EXPECT_EQ(count(8, 24, 16, TN), 4.0);  // dWqkv: h x 3h x n
  EXPECT_EQ(count(16, 8, 24, NT), 4.0);  // d ln1 = dQKV Wqkv^T
  EXPECT_EQ(count(1, 1, 1, NN), 0.0);
}

TEST(PlanWork, AttentionCallsAreTheBlockPassesAndTheirProductsAndSoftmaxBytesArePartOfTheRest) {
  const ModelShape m = tiny();
  for (int ckpt : {0, 1})
    for (int tp : {1, 2}) {
      Layout l;
      l.micro_batches = 2, l.tp = tp, l.ckpt_every = ckpt;
      const AttentionWork a = predict_attention(m, l, 0);
      // One micro-batch of 2 samples of 8 tokens, the rank's heads of 4 columns.
      EXPECT_EQ(a.key(), std::make_tuple(2, 8, 2 / tp, 4));
      // 2 micro-batches x 2 blocks: 4 passes each way, the forward again when checkpointing.
      EXPECT_EQ(a.forward_calls, ckpt ? 8.0 : 4.0);
      EXPECT_EQ(a.backward_calls, 4.0);
      // Every attention product is among the GEMM shapes' counts: here the
      // two attention shapes hold nothing else.
      for (const GemmShape& g : predict_gemms(m, l, 0)) {
        const bool attn = (g.m == 8 && g.n == 8 && g.k == 4) || (g.m == 8 && g.n == 4 && g.k == 8);
        EXPECT_EQ(a.products(g), attn ? g.count : 0.0) << g.m << " " << g.n << " " << g.k;
      }
      // Softmax: 2 x 2/tp x 8 x 8 elements, forward in and out, backward 3.
      const double probs = 2.0 * (2 / tp) * 8 * 8;
      EXPECT_EQ(a.softmax_bytes, 4 * probs * (2 * a.forward_calls + 3 * a.backward_calls));
    }
  // The softmax's share is what the element-wise bytes hold beyond the
  // same count without it (kFwd and kBwd hold 2 x 256 and 3 x 256).
  Layout l;
  l.micro_batches = 2;
  const double without = 4 * (4 * (kFwd - 2 * 256 + kBwd - 3 * 256) + 2 * 3 * 128);
  EXPECT_EQ(predict_elementwise_bytes(m, l, 0) - predict_attention(m, l, 0).softmax_bytes, without);
}

}  // namespace
