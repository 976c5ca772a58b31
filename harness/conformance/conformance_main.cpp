// Conformance tests generated from the registry: one GoogleTest test per
// (technique, conformance parameter set, variant) that can run at this
// process's rank count. CTest discovers them (label `conformance`); the
// multi-rank entries run this binary under mpiexec (see CMakeLists.txt).
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cctype>

#include "../tests/gtest_run.hpp"
#include "checker.hpp"
#include "launch.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/registry.hpp"

namespace {

std::string identifier(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

class ConformanceCase : public ::testing::Test {
 public:
  ConformanceCase(const sp::Registered* r, sp::Params p, std::string v) : r_(r), p_(std::move(p)), v_(std::move(v)) {}
  void TestBody() override {
    sp::CheckRow row = sp::check_one(*r_, p_, v_);
    EXPECT_TRUE(row.error.empty()) << row.error;
    EXPECT_GT(row.result.checked, 0) << "the check compared nothing";
    EXPECT_EQ(row.result.wrong, 0) << row.result.wrong << " of " << row.result.checked
                                   << " elements outside the bound; max abs err " << row.result.max_abs_err
                                   << ", largest bound " << row.result.max_bound << " (" << row.result.bound_rule
                                   << ")";
  }

 private:
  const sp::Registered* r_;
  sp::Params p_;
  std::string v_;
};

}  // namespace

int main(int argc, char** argv) {
  // Listing (CTest's discovery) runs one process without MPI or Kokkos: the
  // single-rank tests are the ones CTest runs one entry each. MPI starts
  // here under a launcher; a process no launcher started is rank 0 of 1 and
  // starts MPI only if a check uses the world communicator (comm.hpp).
  const bool listing = sp::testing::listing_only(argc, argv);
  if (!listing && sp::under_launcher()) sp::comm::init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  // Test names say how many ranks they need, so each CTest entry can filter.
  const int nranks = listing ? 1 : sp::comm::size();
  for (auto& r : sp::Registry::get().all()) {
    if (!r.info.ranks.accepts(nranks)) continue;
    auto proto = r.make();
    for (auto& ps : r.info.param_sets) {
      if (ps.size != sp::Size::conformance) continue;
      for (auto& v : proto->available_variants()) {
        const std::string suite = r.info.family + (r.info.ranks.max > 1 ? "_mr" : "");
        const std::string name = identifier(r.info.name + "__" + v + "__" + ps.params.label());
        const sp::Registered* rp = &r;
        sp::Params p = ps.params;
        ::testing::RegisterTest(suite.c_str(), name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                                [=]() -> ::testing::Test* { return new ConformanceCase(rp, p, v); });
      }
    }
  }
  if (listing) return RUN_ALL_TESTS();
  // Only rank 0 prints; every rank runs every test (the checks are collective).
  if (sp::comm::rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  Kokkos::initialize(argc, argv);
  int rc = sp::testing::run_all_tests();
  Kokkos::finalize();
  rc = sp::comm::all(rc == 0) ? 0 : 1;
  sp::comm::finalize();
  return rc;
}
