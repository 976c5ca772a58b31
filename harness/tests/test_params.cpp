#include <gtest/gtest.h>

#include "scaleproof/params.hpp"
#include "selection.hpp"

using sp::InputError;
using sp::Params;

TEST(Params, LabelRoundTrips) {
  Params p{{"dtype", "fp32"}, {"M", "33"}, {"N", "7"}};
  EXPECT_EQ(p.label(), "dtype=fp32,M=33,N=7");
  Params q = Params::parse(p.label());
  EXPECT_EQ(q.label(), p.label());
  EXPECT_EQ(q.i("M"), 33);
  EXPECT_EQ(q.s("dtype"), "fp32");
}

TEST(Params, SetReplacesInPlace) {
  Params p{{"M", "1"}, {"N", "2"}};
  p.set("M", int64_t{5});
  EXPECT_EQ(p.label(), "M=5,N=2");
}

TEST(Params, RejectsMalformed) {
  EXPECT_THROW(Params::parse("M2048"), InputError);
  EXPECT_THROW(Params::parse("=3"), InputError);
  Params p{{"M", "abc"}};
  EXPECT_THROW(p.i("M"), InputError);
  EXPECT_THROW(p.i("missing"), InputError);
  Params q{{"M", "12x"}};
  EXPECT_THROW(q.i("M"), InputError);
}

TEST(Params, SizesParse) {
  EXPECT_EQ(sp::parse_size("medium"), sp::Size::medium);
  EXPECT_THROW(sp::parse_size("huge"), InputError);
}

TEST(Params, ByteSuffixes) {
  EXPECT_EQ(sp::parse_bytes("8"), 8);
  EXPECT_EQ(sp::parse_bytes("64K"), 65536);
  EXPECT_EQ(sp::parse_bytes("1M"), 1 << 20);
  EXPECT_EQ(sp::parse_bytes("2G"), 2LL << 30);
  EXPECT_THROW(sp::parse_bytes("0"), InputError);
  EXPECT_THROW(sp::parse_bytes("-4K"), InputError);
  EXPECT_THROW(sp::parse_bytes("3T"), InputError);
  EXPECT_THROW(sp::parse_bytes("x"), InputError);
}
