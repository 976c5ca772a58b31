// MPI profiling-interface (PMPI) wrappers of the blocking calls techniques
// use: each records in the heartbeat that the rank is waiting in that call.
// After a hang, a rank inside a technique call but not in MPI is the one that
// hung; ranks in MPI were waiting for it. Defined in the executable, these
// take precedence over the MPI library's symbols (the standard PMPI
// mechanism); each forwards to PMPI_<name> unchanged.
#include "heartbeat.hpp"

#ifdef SP_HAVE_MPI
#include <mpi.h>

namespace sp::heartbeat {
void mpi_enter(const char* call);
void mpi_leave();
}  // namespace sp::heartbeat

namespace {
struct InMpi {
  explicit InMpi(const char* call) { sp::heartbeat::mpi_enter(call); }
  ~InMpi() { sp::heartbeat::mpi_leave(); }
};
}  // namespace

extern "C" {

int MPI_Barrier(MPI_Comm c) {
  InMpi w("MPI_Barrier");
  return PMPI_Barrier(c);
}
int MPI_Bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  InMpi w("MPI_Bcast");
  return PMPI_Bcast(b, n, t, root, c);
}
int MPI_Reduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c) {
  InMpi w("MPI_Reduce");
  return PMPI_Reduce(s, r, n, t, op, root, c);
}
int MPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  InMpi w("MPI_Allreduce");
  return PMPI_Allreduce(s, r, n, t, op, c);
}
int MPI_Allgather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c) {
  InMpi w("MPI_Allgather");
  return PMPI_Allgather(s, sn, st, r, rn, rt, c);
}
int MPI_Reduce_scatter_block(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  InMpi w("MPI_Reduce_scatter_block");
  return PMPI_Reduce_scatter_block(s, r, n, t, op, c);
}
int MPI_Alltoall(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c) {
  InMpi w("MPI_Alltoall");
  return PMPI_Alltoall(s, sn, st, r, rn, rt, c);
}
int MPI_Send(const void* b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c) {
  InMpi w("MPI_Send");
  return PMPI_Send(b, n, t, dest, tag, c);
}
int MPI_Recv(void* b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Status* st) {
  InMpi w("MPI_Recv");
  return PMPI_Recv(b, n, t, src, tag, c, st);
}
int MPI_Sendrecv(const void* sb, int sn, MPI_Datatype st, int dest, int stag, void* rb, int rn, MPI_Datatype rt,
                 int src, int rtag, MPI_Comm c, MPI_Status* status) {
  InMpi w("MPI_Sendrecv");
  return PMPI_Sendrecv(sb, sn, st, dest, stag, rb, rn, rt, src, rtag, c, status);
}
int MPI_Wait(MPI_Request* r, MPI_Status* st) {
  InMpi w("MPI_Wait");
  return PMPI_Wait(r, st);
}
int MPI_Waitall(int n, MPI_Request r[], MPI_Status st[]) {
  InMpi w("MPI_Waitall");
  return PMPI_Waitall(n, r, st);
}

}  // extern "C"
#endif

namespace sp::heartbeat {
// Referenced from heartbeat.cpp so that the linker always keeps this object.
void mpi_wrappers_linked() {}
}  // namespace sp::heartbeat
