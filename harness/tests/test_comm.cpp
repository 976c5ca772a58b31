// The world helpers in a process that no launcher started: rank 0 of 1 with
// MPI down until the world communicator is first used. Each CTest entry is
// its own process, so MPI is down when the test begins; run in a batch after
// a test that started it, the test has nothing to check and says so.
#include <gtest/gtest.h>

#include "launch.hpp"
#include "scaleproof/comm.hpp"

#ifdef SP_HAVE_MPI
namespace {
bool mpi_up() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}
}  // namespace

TEST(Comm, WithoutALauncherMpiStartsAtTheFirstUseOfTheWorld) {
  if (sp::under_launcher()) GTEST_SKIP() << "started by a launcher: MPI is up from the start";
  if (mpi_up()) GTEST_SKIP() << "an earlier test in this process started MPI";
  EXPECT_EQ(sp::comm::rank(), 0);
  EXPECT_EQ(sp::comm::size(), 1);
  EXPECT_EQ(sp::comm::max(2.5), 2.5);
  EXPECT_EQ(sp::comm::sum(7LL), 7LL);
  EXPECT_FALSE(sp::comm::all(false));
  sp::comm::barrier();
  EXPECT_FALSE(mpi_up()) << "a one-rank reduction must not start MPI";
  MPI_Comm w = sp::comm::world();
  ASSERT_TRUE(mpi_up());
  int n = 0;
  MPI_Comm_size(w, &n);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(sp::comm::max(2.5), 2.5);  // now through MPI_Allreduce
}
#endif
