// Unit tests run with Kokkos up (some tests run real techniques).
#include <Kokkos_Core.hpp>

#include "gtest_run.hpp"
#include "scaleproof/comm.hpp"

int main(int argc, char** argv) {
  if (sp::testing::listing_only(argc, argv)) {
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
  }
  sp::comm::init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::initialize(argc, argv);
  int rc = sp::testing::run_all_tests();
  Kokkos::finalize();
  sp::comm::finalize();
  return rc;
}
