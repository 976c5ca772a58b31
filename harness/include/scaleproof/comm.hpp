#pragma once
// World communicator helpers that work with and without MPI, so single-rank
// techniques and the harness never need #ifdefs. Multi-rank techniques use
// world() (an MPI_Comm) directly when SP_HAVE_MPI is defined.
#include <cstdint>
#include <string>
#include <vector>

#ifdef SP_HAVE_MPI
#include <mpi.h>
#endif

namespace sp::comm {

// MPI_Init_thread if built with MPI. Until it runs (or after finalize) the
// process is rank 0 of 1: rank() 0, size() 1, the reductions return their
// argument, barrier() returns; world() runs it on first use.
void init(int* argc, char*** argv);
void finalize();
bool have_mpi();
int rank();
int size();
void barrier();
double max(double v);
double min(double v);
double sum(double v);
long long sum(long long v);
bool all(bool v);                          // logical AND over ranks
std::vector<double> all_gather(double v);  // every rank's v, by rank, on every rank
std::string library_version();             // "MPICH 4.0.2 ..." or "none"
[[noreturn]] void abort(int code);
#ifdef SP_HAVE_MPI
MPI_Comm world();  // starts MPI first if init has not run (main thread only)
MPI_Comm self();   // MPI_COMM_SELF, started as world() is
#endif

}  // namespace sp::comm
