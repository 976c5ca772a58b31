// The planner's in-sequence calibration (block_pass_rates.hpp): a clocked
// block pass computes bitwise what the step's unclocked pass computes and
// records each operation under its phase, once per call; its figures cover
// exactly the block's products outside the attention core, one rate per
// shape and operand layout. Times are not asserted.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "kernels/comm/transport.hpp"
#include "kernels/hybrid/block.hpp"
#include "scaleproof/measure.hpp"
#include "suites/hybrid/block_pass_rates.hpp"

namespace {

using namespace sp::hybrid;

BlockShape shape(int h, int heads, int d, int fl) {
  BlockShape k;
  k.h = h, k.heads = heads, k.d = d, k.fl = fl;
  return k;
}

template <class T>
bool same_bits(const Kokkos::View<T*>& a, const Kokkos::View<T*>& b) {
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  return a.size() == b.size() && std::memcmp(ha.data(), hb.data(), a.size() * sizeof(T)) == 0;
}

TEST(BlockPass, ClockedPassIsBitwiseTheStepsAndTimesEachOperationOnce) {
  const BlockShape k = shape(8, 2, 4, 16);
  const Rows r{2, 3};
  const BlockAct a{k, r, 1};
  const BlockScratch sc{k, r, 1};
  const int64_t nh = int64_t(r.n()) * k.h;
  Kokkos::View<float*> w("w", k.elems()), x("x", nh), dy("dy", nh);
  elementwise_fill(w, 17, 0.3f), elementwise_fill(x, 13), elementwise_fill(dy, 11);
  sp::comm::SelfTransport self;
  sp::dp::MemoryTracker mem;
  GroupComm<float> tp(self, mem);
  sp::PhaseClock clock;
  Kokkos::View<float*> act[2], dx[2], gw[2], scratch[2];
  for (int c = 0; c < 2; ++c) {
    act[c] = Kokkos::View<float*>("act", a.elems()), dx[c] = Kokkos::View<float*>("dx", nh);
    gw[c] = Kokkos::View<float*>("gw", k.elems()), scratch[c] = Kokkos::View<float*>("scratch", sc.elems());
    sp::PhaseClock* on = c == 1 ? &clock : nullptr;
    block_forward<float>(a, w.data(), x.data(), act[c].data(), tp, 1, on);
    block_backward<float>(a, w.data(), gw[c].data(), x.data(), act[c].data(), dy.data(), dx[c].data(),
                          scratch[c].data(), tp, 1, true, on);
  }
  Kokkos::fence();
  EXPECT_TRUE(same_bits(act[0], act[1]));
  EXPECT_TRUE(same_bits(dx[0], dx[1]));
  EXPECT_TRUE(same_bits(gw[0], gw[1]));
  // The products outside the attention core, by their position in the GEMM lists.
  for (int i : {0, 3, 4, 5}) EXPECT_EQ(clock.count(block_phase_gemm(false, i)), 1) << i;
  for (int i : {1, 2}) EXPECT_EQ(clock.count(block_phase_gemm(false, i)), 0) << i;
  for (int i : {0, 1, 2, 3, 4, 5, 10, 11}) EXPECT_EQ(clock.count(block_phase_gemm(true, i)), 1) << i;
  for (int i : {6, 7, 8, 9}) EXPECT_EQ(clock.count(block_phase_gemm(true, i)), 0) << i;
  EXPECT_EQ(clock.count(kPhaseAttentionForward), 1);
  EXPECT_EQ(clock.count(kPhaseAttentionBackward), 1);
  EXPECT_EQ(clock.count(kPhaseElementwise), 4 + 3);  // runs of adjacent element-wise operations
}

TEST(BlockPass, FiguresHaveOneRatePerShapeOutsideTheAttentionCore) {
  // hl = fl: the forward's Wo and W2 products share a shape (n x h x 16, nn),
  // pooled into one rate.
  const BlockShape k = shape(8, 2, 8, 16);
  const Rows r{2, 4};
  const BlockAct a{k, r, 1};
  std::set<GemmShape::Key> want;
  const std::vector<BlockGemm> f = block_gemms_forward(a), b = block_gemms_backward(a);
  for (int i : {0, 3, 4, 5}) want.insert(GemmShape{f[i].m, f[i].n, f[i].k, 1, f[i].ops}.key());
  for (int i : {0, 1, 2, 3, 4, 5, 10, 11}) want.insert(GemmShape{b[i].m, b[i].n, b[i].k, 1, b[i].ops}.key());
  ASSERT_LT(want.size(), 12u);
  const BlockPassFigures got = block_pass_rates<float>(k, r, 2);
  std::set<GemmShape::Key> keys;
  for (const auto& [key, rate] : got.gemm_rate) {
    keys.insert(key);
    EXPECT_TRUE(std::isfinite(rate) && rate > 0) << pass_gemm_counter(key);
  }
  EXPECT_EQ(keys, want);
  EXPECT_GT(got.attention_forward_s, 0.0);
  EXPECT_GT(got.attention_backward_s, 0.0);
  EXPECT_TRUE(std::isfinite(got.elementwise_bw) && got.elementwise_bw > 0);
}

TEST(BlockPass, CounterNamesTheShapeAndLayout) {
  EXPECT_EQ(pass_gemm_counter(GemmShape{512, 128, 64, 1, GemmOps::tn}.key()), "gemm_flops_512x128x64_tn");
}

}  // namespace
