// Model-parallel unit tests run with MPI and Kokkos up (the layer tests use Kokkos kernels).
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include "scaleproof/comm.hpp"

int main(int argc, char** argv) {
  sp::comm::init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::initialize(argc, argv);
  int rc = RUN_ALL_TESTS();
  Kokkos::finalize();
  sp::comm::finalize();
  return rc;
}
