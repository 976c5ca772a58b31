#include "scaleproof/comm.hpp"

#include <cstdlib>

namespace sp::comm {

#ifdef SP_HAVE_MPI
static bool we_initialized = false;

void init(int* argc, char*** argv) {
  int flag = 0, fin = 0;
  MPI_Initialized(&flag);
  MPI_Finalized(&fin);
  if (!flag && !fin) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    we_initialized = true;
  }
}
void finalize() {
  int flag = 0;
  MPI_Finalized(&flag);
  if (we_initialized && !flag) MPI_Finalize();
}
bool have_mpi() { return true; }
static bool up() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}
// A process that no launcher started and that has not called init is rank 0
// of 1: the reductions below return their argument, and the first use of
// the communicator itself starts MPI then (on the calling thread, which
// must be the main one: MPI_THREAD_FUNNELED). Test binaries start that way,
// so that a test which never communicates does not pay for MPI's start-up.
MPI_Comm world() {
  if (!up()) init(nullptr, nullptr);
  return MPI_COMM_WORLD;
}
MPI_Comm self() {
  world();
  return MPI_COMM_SELF;
}
int rank() {
  int r = 0;
  if (!up()) return 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int size() {
  int s = 1;
  if (!up()) return 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}
void barrier() {
  if (up()) MPI_Barrier(MPI_COMM_WORLD);
}
static double reduce_d(double v, MPI_Op op) {
  double out = v;
  if (up()) MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, op, MPI_COMM_WORLD);
  return out;
}
double max(double v) { return reduce_d(v, MPI_MAX); }
double min(double v) { return reduce_d(v, MPI_MIN); }
double sum(double v) { return reduce_d(v, MPI_SUM); }
long long sum(long long v) {
  long long out = v;
  if (up()) MPI_Allreduce(&v, &out, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return out;
}
bool all(bool v) {
  int in = v ? 1 : 0, out = in;
  if (up()) MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return out != 0;
}
std::vector<double> all_gather(double v) {
  std::vector<double> out(static_cast<size_t>(size()), v);
  if (up()) MPI_Allgather(&v, 1, MPI_DOUBLE, out.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
  return out;
}
std::string library_version() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(buf, &len);
  std::string s(buf, len);
  // MPICH prints several lines; the first names the library and version.
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}
void abort(int code) {
  if (up()) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}
#else
void init(int*, char***) {}
void finalize() {}
bool have_mpi() { return false; }
int rank() { return 0; }
int size() { return 1; }
void barrier() {}
double max(double v) { return v; }
double min(double v) { return v; }
double sum(double v) { return v; }
long long sum(long long v) { return v; }
bool all(bool v) { return v; }
std::vector<double> all_gather(double v) { return {v}; }
std::string library_version() { return "none"; }
void abort(int code) { std::_Exit(code); }
#endif

}  // namespace sp::comm
