#include <gtest/gtest.h>

#include <cmath>

#include "scaleproof/compare.hpp"

TEST(Compare, GammaMatchesDefinition) {
  const double u = sp::unit_roundoff<float>();
  EXPECT_DOUBLE_EQ(u, std::ldexp(1.0, -24));
  EXPECT_DOUBLE_EQ(sp::gamma_n(10, u), 10 * u / (1 - 10 * u));
  EXPECT_TRUE(std::isinf(sp::gamma_n(1e9, 1e-8)));  // n u >= 1: no bound
}

TEST(Compare, CountsElementsOutsideTheirBound) {
  sp::Comparator c("test");
  c.add(1.0, 1.0, 0.0);  // exact
  c.add(1.1, 1.0, 0.2);  // inside
  c.add(1.5, 1.0, 0.2);  // outside
  EXPECT_NEAR(c.result().max_abs_err, 0.5, 1e-12);
  c.add(NAN, 1.0, 1e300);  // NaN is always wrong, and shows in the max error
  EXPECT_EQ(c.result().checked, 4);
  EXPECT_EQ(c.result().wrong, 2);
  EXPECT_TRUE(std::isnan(c.result().max_abs_err));
  EXPECT_FALSE(c.result().passed());
}

TEST(Compare, EmptyCheckDoesNotPass) {
  sp::Comparator c("nothing");
  EXPECT_FALSE(c.result().passed());
}

TEST(RankRule, AcceptsAndDescribes) {
  sp::RankRule r{2, 8, true};
  EXPECT_FALSE(r.accepts(1));
  EXPECT_TRUE(r.accepts(2));
  EXPECT_FALSE(r.accepts(3));
  EXPECT_TRUE(r.accepts(8));
  EXPECT_FALSE(r.accepts(16));
  EXPECT_EQ(r.describe(), "2..8, power of two");
}
