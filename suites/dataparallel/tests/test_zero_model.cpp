// The analytical ZeRO model against the paper's published check values
// (Rajbhandari et al. SC'20, Figure 1: Psi = 7.5e9, N_d = 64, mixed
// precision with K = 12): 120, 31.4, 16.6 and 1.9 GB per device.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/dataparallel/zero_model.hpp"

using namespace sp::dp;

namespace {
double gb1(double bytes) { return std::round(bytes / 1e8) / 10; }  // decimal GB, one decimal as printed
}  // namespace

TEST(ZeroModel, PaperFigure1) {
  const auto pr = mixed_precision();
  EXPECT_DOUBLE_EQ(gb1(zero_cost(Stage::ddp, 7.5e9, 64, pr).total()), 120.0);
  EXPECT_DOUBLE_EQ(gb1(zero_cost(Stage::zero1, 7.5e9, 64, pr).total()), 31.4);
  EXPECT_DOUBLE_EQ(gb1(zero_cost(Stage::zero2, 7.5e9, 64, pr).total()), 16.6);
  EXPECT_DOUBLE_EQ(gb1(zero_cost(Stage::zero3, 7.5e9, 64, pr).total()), 1.9);
}

TEST(ZeroModel, TrafficIsTwoOrThreePsi) {
  // In units of Psi gradient elements: 2 for DDP/ZeRO-1/ZeRO-2, 3 for ZeRO-3 (paper Sec. 7).
  const auto pr = fp32_adam();
  const double psi = 1000;
  EXPECT_DOUBLE_EQ(zero_cost(Stage::ddp, psi, 8, pr).traffic, 2 * psi * 4);
  EXPECT_DOUBLE_EQ(zero_cost(Stage::zero1, psi, 8, pr).traffic, 2 * psi * 4);
  EXPECT_DOUBLE_EQ(zero_cost(Stage::zero2, psi, 8, pr).traffic, 2 * psi * 4);
  EXPECT_DOUBLE_EQ(zero_cost(Stage::zero3, psi, 8, pr).traffic, 3 * psi * 4);
  // Exact ring: (N_d-1)/N_d of that; nothing moves at one rank.
  EXPECT_DOUBLE_EQ(zero_cost(Stage::zero3, psi, 8, pr, true).traffic, 3 * psi * 4 * 7 / 8);
  EXPECT_DOUBLE_EQ(zero_cost(Stage::ddp, psi, 1, pr, true).traffic, 0);
}

TEST(ZeroModel, Fp32ConventionSameStructure) {
  // fp32 Adam: 4+4+8 = 16 bytes/param unsharded, the same total as mixed precision's 2+2+12.
  const double psi = 1e6;
  EXPECT_DOUBLE_EQ(zero_cost(Stage::ddp, psi, 4, fp32_adam()).total(), 16 * psi);
  EXPECT_DOUBLE_EQ(zero_cost(Stage::zero1, psi, 4, fp32_adam()).total(), 8 * psi + 8 * psi / 4);
  EXPECT_DOUBLE_EQ(zero_cost(Stage::zero2, psi, 4, fp32_adam()).total(), 4 * psi + 12 * psi / 4);
  EXPECT_DOUBLE_EQ(zero_cost(Stage::zero3, psi, 4, fp32_adam()).total(), 16 * psi / 4);
  EXPECT_DOUBLE_EQ(param_server_load(psi, 4, 4), 2 * 3 * psi * 4);
}
