// The element comparator and the conformance checker at the edge of the
// bound: an element exactly on its bound passes, the next representable
// value past it fails, on either side of the reference, and the checker
// turns one wrong element (or an exception) into a FAILED row.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

#include "checker.hpp"
#include "scaleproof/compare.hpp"

namespace {

const double kInf = std::numeric_limits<double>::infinity();

// Reference 1, bound 1/4: both edges are exact in binary floating point.
constexpr double kWant = 1.0, kBound = 0.25;

long long wrong_after(double got, double want, double bound) {
  sp::Comparator c("edge");
  c.add(got, want, bound);
  return c.result().wrong;
}

TEST(ComparatorEdge, OnTheBoundPasses) {
  EXPECT_EQ(wrong_after(kWant + kBound, kWant, kBound), 0);
  EXPECT_EQ(wrong_after(kWant - kBound, kWant, kBound), 0);
  EXPECT_EQ(wrong_after(kWant, kWant, 0.0), 0);  // exact check, exact value
}

TEST(ComparatorEdge, JustPastTheBoundFails) {
  EXPECT_EQ(wrong_after(std::nextafter(kWant + kBound, kInf), kWant, kBound), 1);
  EXPECT_EQ(wrong_after(std::nextafter(kWant - kBound, -kInf), kWant, kBound), 1);
  EXPECT_EQ(wrong_after(std::nextafter(kWant, kInf), kWant, 0.0), 1);  // exact check, 1 ulp off
  // Float outputs: one float ulp past a float-representable bound.
  const float got = std::nextafter(1.25f, 2.0f);
  EXPECT_EQ(wrong_after(got, kWant, kBound), 1);
}

TEST(ComparatorEdge, NonFiniteIsWrong) {
  EXPECT_EQ(wrong_after(kInf, kWant, 1e300), 1);
  EXPECT_EQ(wrong_after(kInf, kInf, 1e300), 1);  // inf - inf is NaN: never "equal"
  EXPECT_EQ(wrong_after(NAN, NAN, kInf), 1);
}

TEST(ComparatorEdge, ReportsTheLargestErrorAndBound) {
  sp::Comparator c("edge");
  c.add(kWant + kBound, kWant, kBound);
  c.add(kWant, kWant, 2 * kBound);
  EXPECT_DOUBLE_EQ(c.result().max_abs_err, kBound);
  EXPECT_DOUBLE_EQ(c.result().max_bound, 2 * kBound);
  EXPECT_DOUBLE_EQ(c.result().max_rel_err, kBound / kWant);
  EXPECT_TRUE(c.result().passed());
}

TEST(ComparatorEdge, MergeKeepsEveryWrongElement) {
  sp::Comparator a("a"), b("b");
  a.add(kWant, kWant, kBound);
  b.add(std::nextafter(kWant + kBound, kInf), kWant, kBound);
  sp::CheckResult r = a.result();
  r.merge(b.result());
  EXPECT_EQ(r.checked, 2);
  EXPECT_EQ(r.wrong, 1);
  EXPECT_FALSE(r.passed());
}

enum class Throws { no, in_run, in_teardown };

// A one-element technique whose output is `got`, checked against kWant with
// kBound; it may throw in run() (nothing compared) or in teardown() (after a
// comparison that passed).
class EdgeTech : public sp::Technique {
 public:
  EdgeTech(double got, Throws throws) : Technique(info()), got_(got), throws_(throws) {}
  static sp::Info info() {
    sp::Info i;
    i.name = "edge_case";
    i.family = "testonly";
    i.variants = {sp::Variant::kernel("kokkos")};
    i.param_sets = {{sp::Size::conformance, {{"n", "1"}}}};
    return i;
  }
  sp::Counts counts(const sp::Params&, int) const override { return {}; }
  void setup(const sp::Params&, int) override {}
  void run(const std::string&) override {
    if (throws_ == Throws::in_run) throw std::runtime_error("kernel failed");
  }
  void teardown() override {
    if (throws_ == Throws::in_teardown) throw std::runtime_error("teardown failed");
  }
  sp::CheckResult check(const std::string&) override {
    sp::Comparator c("edge");
    c.add(got_, kWant, kBound);
    return c.result();
  }

 private:
  double got_;
  Throws throws_;
};

sp::CheckRow check_edge(double got, Throws throws = Throws::no) {
  sp::Registered r{[=] { return std::make_unique<EdgeTech>(got, throws); }, EdgeTech::info()};
  return sp::check_one(r, r.info.param_sets.front().params, "kokkos");
}

TEST(CheckerEdge, OnTheBoundIsPassed) {
  auto row = check_edge(kWant + kBound);
  EXPECT_TRUE(row.passed());
  EXPECT_EQ(row.result.checked, 1);
}

TEST(CheckerEdge, JustPastTheBoundIsFailed) {
  auto row = check_edge(std::nextafter(kWant + kBound, kInf));
  EXPECT_FALSE(row.passed());
  EXPECT_EQ(row.result.wrong, 1);
  EXPECT_NE(sp::check_table({row}).find("FAILED"), std::string::npos);
  EXPECT_EQ(sp::to_json({row})[0]["passed"], false);
}

TEST(CheckerEdge, ExceptionIsFailed) {
  auto row = check_edge(kWant, Throws::in_run);
  EXPECT_FALSE(row.passed());
  EXPECT_EQ(row.error, "kernel failed");
}

TEST(CheckerEdge, ExceptionAfterAPassingComparisonIsFailed) {
  auto row = check_edge(kWant, Throws::in_teardown);
  EXPECT_TRUE(row.result.passed());  // the comparison itself passed
  EXPECT_FALSE(row.passed());
  EXPECT_EQ(row.error, "teardown failed");
}

}  // namespace
