// Activation checkpointing memory on a transformer-like example (24 blocks x 5
// linear inputs: 120 stored activations become 24), the sqrt(n) optimum of
// the peak, and the family's refusal of bad parameters through the registry
// (k > n, sparsity outside [0, 1)).
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>

#include "kernels/precision/block_stack.hpp"
#include "kernels/precision/sparse.hpp"
#include "scaleproof/registry.hpp"

namespace {

using sp::precision::BlockStack;

BlockStack stack(int n, int s) {
  const int B = 2, W = 4;
  std::vector<float> w(size_t(n) * s * W * W), x(B * W, 0.5f), d(B * W, 1.0f);
  for (size_t i = 0; i < w.size(); ++i) w[i] = (i % 5 == 0) ? -0.3f : 0.6f;
  return BlockStack({n, s, B, W}, w, x, d);
}

TEST(Checkpointing, Seed003StoredActivations) {
  auto st = stack(24, 5);
  st.train_step(0);
  EXPECT_EQ(st.stored_after_forward(), 120);
  EXPECT_EQ(st.peak_buffers(), 121);  // plus the output, at the end of forward
  st.train_step(1);
  EXPECT_EQ(st.stored_after_forward(), 24);
  // 24 checkpoints + one block's 5 recomputed inputs (its own checkpoint among them) + its output.
  EXPECT_EQ(st.peak_buffers(), 29);
}

TEST(Checkpointing, PeakIsSmallestNearSqrtN) {
  // s = 1: the peak n/k + k is minimal, 2 sqrt(n) = 8, at k = sqrt(16) = 4
  // (k = 3 and 5 tie through the rounding of n/k); no checkpointing (k = n)
  // and a checkpoint per block (k = 1) both hold n + 1.
  auto st = stack(16, 1);
  std::vector<long long> peak(17);
  for (int k = 1; k <= 16; ++k) {
    st.train_step(k);
    peak[k] = st.peak_buffers();
  }
  EXPECT_EQ(*std::min_element(peak.begin() + 1, peak.end()), 8);
  EXPECT_EQ(peak[4], 8);
  EXPECT_EQ(peak[1], 17);
  EXPECT_EQ(peak[16], 17);
  st.train_step(0);
  EXPECT_EQ(st.peak_buffers(), 17);
}

TEST(Checkpointing, RefusesKAboveN) {
  auto* r = sp::Registry::get().find("checkpointing");
  ASSERT_NE(r, nullptr);
  auto t = r->make();
  EXPECT_THROW(t->validate(sp::Params{{"n", "4"}, {"s", "1"}, {"k", "5"}, {"B", "2"}, {"W", "2"}}, 1), sp::InputError);
  EXPECT_NO_THROW(t->validate(sp::Params{{"n", "4"}, {"s", "1"}, {"k", "4"}, {"B", "2"}, {"W", "2"}}, 1));
}

TEST(Pruning, SparsityMustBeInZeroOne) {
  auto t = sp::Registry::get().find("pruning")->make();
  auto p = [](const char* s) {
    return sp::Params{{"M", "4"}, {"N", "4"}, {"K", "4"}, {"sparsity", s}, {"sweep", "0"}};
  };
  for (const char* bad : {"1", "1.5", "-0.1", "nan", "inf", "x"})
    EXPECT_THROW(t->validate(p(bad), 1), sp::InputError) << bad;
  for (const char* ok : {"0", "0.5", "0.999"}) EXPECT_NO_THROW(t->validate(p(ok), 1)) << ok;
}

TEST(Pruning, KeepsTheLargestMagnitudes) {
  std::vector<float> w = {0.1f, -5, 3, -0.2f, 3, 0};
  auto m = sp::precision::magnitude_mask(w, 3);
  EXPECT_EQ(m, (std::vector<char>{0, 1, 1, 0, 1, 0}));
  EXPECT_EQ(sp::precision::kept_count(1000, 0.9), 100);
}

}  // namespace
