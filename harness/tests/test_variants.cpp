// Typed variant declarations: what the registry refuses, which variants a
// build offers (by their memory need) with the reason for the others, and
// the probe that pairs the main variant with the baseline where it runs.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <stdexcept>

#include "scaleproof/technique.hpp"

namespace {

using sp::MemoryNeed;
using sp::Variant;

sp::Info declared(std::vector<Variant> variants, std::string baseline = {}) {
  sp::Info i;
  i.name = "variant_test";
  i.family = "testonly";
  i.variants = std::move(variants);
  i.baseline = std::move(baseline);
  return i;
}

TEST(VariantDeclaration, AWellFormedOneIsAccepted) {
  EXPECT_NO_THROW(sp::check_declaration(
      declared({Variant::kernel("kokkos"), Variant::vendor("openblas", "openblas", MemoryNeed::host)}, "openblas")));
  EXPECT_NO_THROW(sp::check_declaration(declared({Variant::strategy("ddp"), Variant::strategy("zero1")})));
}

TEST(VariantDeclaration, EachMalformedOneIsRefused) {
  EXPECT_THROW(sp::check_declaration(declared({})), std::logic_error);
  EXPECT_THROW(sp::check_declaration(declared({Variant::vendor("openblas", "openblas", MemoryNeed::host)})),
               std::logic_error);
  EXPECT_THROW(sp::check_declaration(declared({Variant::kernel("kokkos"), {"blas", sp::VariantKind::vendor}})),
               std::logic_error);
  EXPECT_THROW(sp::check_declaration(declared({{"kokkos", sp::VariantKind::kernel, "openblas"}})), std::logic_error);
  EXPECT_THROW(sp::check_declaration(declared({Variant::kernel("kokkos"), Variant::algorithm("kokkos")})),
               std::logic_error);
  EXPECT_THROW(sp::check_declaration(declared({Variant::kernel("kokkos")}, "openblas")), std::logic_error);
  // A baseline alternative must be a declared variant of the baseline's library.
  auto alt = [](const char* library, const char* name) {
    sp::Info i = declared({Variant::kernel("kokkos"), Variant::vendor("blas", "openblas", MemoryNeed::host),
                           Variant::vendor("blas_plain", library, MemoryNeed::host)},
                          "blas");
    i.baseline_alternatives = {name};
    return i;
  };
  EXPECT_NO_THROW(sp::check_declaration(alt("openblas", "blas_plain")));
  EXPECT_THROW(sp::check_declaration(alt("mkl", "blas_plain")), std::logic_error);
  EXPECT_THROW(sp::check_declaration(alt("openblas", "blas_other")), std::logic_error);
  EXPECT_THROW(sp::check_declaration(alt("openblas", "kokkos")), std::logic_error);
}

class Declared : public sp::Technique {
 public:
  explicit Declared(std::string baseline = {}, std::vector<std::string> alternatives = {})
      : Technique(declared({Variant::kernel("kokkos"), Variant::vendor("hostlib", "hostlib", MemoryNeed::host),
                            Variant::vendor("hostlib_plain", "hostlib", MemoryNeed::host),
                            Variant::vendor("devlib", "devlib", MemoryNeed::device)},
                           std::move(baseline))) {
    info_.baseline_alternatives = std::move(alternatives);
  }
  sp::Counts counts(const sp::Params&, int) const override { return {}; }
  void setup(const sp::Params&, int) override {}
  void run(const std::string&) override {}
  sp::CheckResult check(const std::string&) override { return {}; }
  std::vector<sp::Probe> probes(const std::string& variant) const override { return paired_with_baseline(variant); }
};

TEST(VariantDeclaration, TheBuildOffersTheVariantsWhoseMemoryNeedItMeets) {
  constexpr bool host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible;
  Declared t;
  const std::vector<std::string> want = host ? std::vector<std::string>{"kokkos", "hostlib", "hostlib_plain"}
                                             : std::vector<std::string>{"kokkos", "devlib"};
  EXPECT_EQ(t.available_variants(), want);
  EXPECT_EQ(t.why_unavailable("kokkos", 1), "");
  const std::string missing = host ? "devlib" : "hostlib";
  EXPECT_NE(t.why_unavailable(missing, 1).find(host ? "needs device memory" : "needs host-accessible memory"),
            std::string::npos);
  EXPECT_NE(t.why_unavailable("nope", 1).find("has no variant 'nope'"), std::string::npos);
  EXPECT_STREQ(sp::to_string(t.info().variant("devlib")->kind), "vendor");
  EXPECT_EQ(t.info().variant("nope"), nullptr);
}

TEST(VariantDeclaration, TheMainVariantIsPairedWithABaselineThatRunsInThisBuild) {
  constexpr bool host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible;
  const std::string runs = host ? "hostlib" : "devlib", missing = host ? "devlib" : "hostlib";
  const std::vector<sp::Probe> p = Declared(runs).probes("kokkos");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].name, sp::kPairedVsBaseline);
  EXPECT_EQ(p[0].calls, (std::vector<std::string>{"kokkos", runs}));  // the counter is stat(baseline) / stat(kokkos)
  EXPECT_EQ(p[0].samples, 9);
  EXPECT_EQ(p[0].settle, 1);
  EXPECT_EQ(p[0].stat, sp::Probe::Stat::median);
  EXPECT_TRUE(Declared(runs).probes(runs).empty());         // only the main variant's case
  EXPECT_TRUE(Declared(missing).probes("kokkos").empty());  // a baseline this build cannot run
  EXPECT_TRUE(Declared().probes("kokkos").empty());         // no baseline
  // An alternative way of the baseline's library joins the calls where it runs.
  if (host) {
    const std::vector<sp::Probe> q = Declared("hostlib", {"hostlib_plain"}).probes("kokkos");
    ASSERT_EQ(q.size(), 1u);
    EXPECT_EQ(q[0].calls, (std::vector<std::string>{"kokkos", "hostlib", "hostlib_plain"}));
  }
}

}  // namespace
