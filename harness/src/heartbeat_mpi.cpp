// MPI profiling-interface (PMPI) wrappers of the blocking calls techniques
// use: each records in the heartbeat that the rank is waiting in that call.
// After a hang, a rank inside a technique call but not in MPI is the one that
// hung; ranks in MPI were waiting for it. Defined in the executable, these
// take precedence over the MPI library's symbols (the standard PMPI
// mechanism); each forwards to PMPI_<name> unchanged.
#include "heartbeat.hpp"

#ifdef SP_HAVE_MPI
#include <mpi.h>

namespace {
// Codes are 1 + the index in sp::heartbeat::mpi_call_names() below.
enum Call {
  Barrier = 1,
  Bcast,
  Reduce,
  Allreduce,
  Allgather,
  Reduce_scatter_block,
  Alltoall,
  Send,
  Recv,
  Sendrecv,
  Wait,
  Waitall
};
struct InMpi {
  explicit InMpi(Call call) { sp::heartbeat::mpi_enter(call); }
  ~InMpi() { sp::heartbeat::mpi_leave(); }
};
}  // namespace

extern "C" {

int MPI_Barrier(MPI_Comm c) {
  InMpi w(Barrier);
  return PMPI_Barrier(c);
}
int MPI_Bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  InMpi w(Bcast);
  return PMPI_Bcast(b, n, t, root, c);
}
int MPI_Reduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c) {
  InMpi w(Reduce);
  return PMPI_Reduce(s, r, n, t, op, root, c);
}
int MPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  InMpi w(Allreduce);
  return PMPI_Allreduce(s, r, n, t, op, c);
}
int MPI_Allgather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c) {
  InMpi w(Allgather);
  return PMPI_Allgather(s, sn, st, r, rn, rt, c);
}
int MPI_Reduce_scatter_block(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  InMpi w(Reduce_scatter_block);
  return PMPI_Reduce_scatter_block(s, r, n, t, op, c);
}
int MPI_Alltoall(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c) {
  InMpi w(Alltoall);
  return PMPI_Alltoall(s, sn, st, r, rn, rt, c);
}
int MPI_Send(const void* b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c) {
  InMpi w(Send);
  return PMPI_Send(b, n, t, dest, tag, c);
}
int MPI_Recv(void* b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Status* st) {
  InMpi w(Recv);
  return PMPI_Recv(b, n, t, src, tag, c, st);
}
int MPI_Sendrecv(const void* sb, int sn, MPI_Datatype st, int dest, int stag, void* rb, int rn, MPI_Datatype rt,
                 int src, int rtag, MPI_Comm c, MPI_Status* status) {
  InMpi w(Sendrecv);
  return PMPI_Sendrecv(sb, sn, st, dest, stag, rb, rn, rt, src, rtag, c, status);
}
int MPI_Wait(MPI_Request* r, MPI_Status* st) {
  InMpi w(Wait);
  return PMPI_Wait(r, st);
}
int MPI_Waitall(int n, MPI_Request r[], MPI_Status st[]) {
  InMpi w(Waitall);
  return PMPI_Waitall(n, r, st);
}

}  // extern "C"
#endif

namespace sp::heartbeat {
// Referenced from heartbeat.cpp so that the linker always keeps this object.
void mpi_wrappers_linked() {}

const std::vector<std::string>& mpi_call_names() {
  static const std::vector<std::string> names = {
      "MPI_Barrier",  "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Allgather", "MPI_Reduce_scatter_block",
      "MPI_Alltoall", "MPI_Send",  "MPI_Recv",   "MPI_Sendrecv",  "MPI_Wait",      "MPI_Waitall"};
  return names;
}
}  // namespace sp::heartbeat
