// Typed variant declarations: what the registry refuses, and which variants
// a build offers (by their memory need) with the reason for the others.
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
}

class Declared : public sp::Technique {
 public:
  Declared()
      : Technique(declared({Variant::kernel("kokkos"), Variant::vendor("hostlib", "hostlib", MemoryNeed::host),
                            Variant::vendor("devlib", "devlib", MemoryNeed::device)})) {}
  sp::Counts counts(const sp::Params&, int) const override { return {}; }
  void setup(const sp::Params&, int) override {}
  void run(const std::string&) override {}
  sp::CheckResult check(const std::string&) override { return {}; }
};

TEST(VariantDeclaration, TheBuildOffersTheVariantsWhoseMemoryNeedItMeets) {
  constexpr bool host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible;
  Declared t;
  const std::vector<std::string> want = {"kokkos", host ? "hostlib" : "devlib"};
  EXPECT_EQ(t.available_variants(), want);
  EXPECT_EQ(t.why_unavailable("kokkos", 1), "");
  const std::string missing = host ? "devlib" : "hostlib";
  EXPECT_NE(t.why_unavailable(missing, 1).find(host ? "needs device memory" : "needs host-accessible memory"),
            std::string::npos);
  EXPECT_NE(t.why_unavailable("nope", 1).find("has no variant 'nope'"), std::string::npos);
  EXPECT_STREQ(sp::to_string(t.info().variant("devlib")->kind), "vendor");
  EXPECT_EQ(t.info().variant("nope"), nullptr);
}

}  // namespace
