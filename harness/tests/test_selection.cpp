#include <gtest/gtest.h>

#include <algorithm>

#include "selection.hpp"

using sp::Filter;
using sp::InputError;

TEST(Selection, UnknownNamesAreErrors) {
  EXPECT_THROW(sp::select_cases(Filter{{"nosuch"}, {}, {}, {}, {}}, 1), InputError);
  EXPECT_THROW(sp::select_cases(Filter{{}, {"nosuch"}, {}, {}, {}}, 1), InputError);
}

TEST(Selection, OverridesApplyAndValidate) {
  Filter f{{}, {"gemm"}, {sp::Size::small}, {"M=48,N=40"}, {}};
  auto cases = sp::select_cases(f, 1);
  ASSERT_FALSE(cases.empty());
  for (auto& c : cases) {
    EXPECT_EQ(c.params.i("M"), 48);
    EXPECT_EQ(c.params.i("N"), 40);
  }
  f.sets = {"M=0"};
  EXPECT_THROW(sp::select_cases(f, 1), InputError);
  f.sets = {"nosuchparam=3"};
  EXPECT_THROW(sp::select_cases(f, 1), InputError);
}

TEST(Selection, RankCountTheTechniqueCannotUse) {
  // Named explicitly: an error. Through its family: skipped and reported.
  EXPECT_THROW(sp::select_cases(Filter{{}, {"gemm"}, {sp::Size::small}, {}, {}}, 3), InputError);
  std::vector<std::string> skipped;
  EXPECT_THROW(sp::select_cases(Filter{{"gemm"}, {}, {sp::Size::small}, {}, {}}, 3, &skipped), InputError);
  EXPECT_EQ(skipped, std::vector<std::string>{"gemm"});
}

TEST(Selection, VariantFilter) {
  auto cases = sp::select_cases(Filter{{}, {"gemm"}, {sp::Size::small}, {}, {"kokkos"}}, 1);
  for (auto& c : cases) EXPECT_EQ(c.variants, std::vector<std::string>{"kokkos"});
  EXPECT_THROW(sp::select_cases(Filter{{}, {"gemm"}, {sp::Size::small}, {}, {"nosuch"}}, 1), InputError);
}

TEST(Selection, SetsThatCannotRunAtTheRankCount) {
  // pipeline_interleaved's small sets have 8 layers and v = 2: at 8 ranks
  // they cannot fill 16 chunks. Through the family they are left out (the
  // technique is reported skipped when none remains); named, an error.
  std::vector<std::string> skipped;
  auto cases = sp::select_cases(Filter{{"modelparallel"}, {}, {sp::Size::small}, {}, {}}, 8, &skipped);
  for (auto& c : cases) {
    if (c.tech->info.name != "pipeline_interleaved") continue;
    EXPECT_LE(8 * c.params.i("v"), c.params.i("L")) << c.params.label();
  }
  EXPECT_NE(std::find(skipped.begin(), skipped.end(), "pipeline_interleaved"), skipped.end());
  EXPECT_THROW(sp::select_cases(Filter{{}, {"pipeline_interleaved"}, {sp::Size::small}, {}, {}}, 8), InputError);
  EXPECT_THROW(sp::select_cases(Filter{{"modelparallel"}, {}, {sp::Size::small}, {"L=8"}, {}}, 8), InputError);
}
