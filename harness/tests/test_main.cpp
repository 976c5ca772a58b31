// Unit tests run with Kokkos up (some tests run real techniques), under the
// host heap policy scaleproof sets before anything allocates (host_heap.hpp),
// so that techniques run here as they run in the tool. MPI starts here only
// under a launcher (the multi-rank entries); a single test that no launcher
// started gets MPI at its first use of the world communicator (comm.hpp),
// and most never use it.
#include <Kokkos_Core.hpp>

#include "gtest_run.hpp"
#include "host_heap.hpp"
#include "launch.hpp"
#include "scaleproof/comm.hpp"

int main(int argc, char** argv) {
  if (sp::testing::listing_only(argc, argv)) {
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
  }
  sp::keep_freed_host_memory();
  if (sp::under_launcher()) sp::comm::init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::initialize(argc, argv);
  int rc = sp::testing::run_all_tests();
  Kokkos::finalize();
  sp::comm::finalize();
  return rc;
}
