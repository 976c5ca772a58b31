#pragma once
// Parameter-server all-reduce: every worker pushes its whole
// buffer to one server rank, which reduces the p-1 contributions into its
// own and pushes the result back. All 2(p-1)n bytes go through the server's
// link, so its time grows with p:
//   2(p-1)(alpha + n beta) + (p-1) n gamma   (derived; docs/collectives.md, "Time of one call").
// Traffic phases: "push" (workers -> server) and "pull" (server -> workers).

#include "kernels/comm/ring.hpp"

namespace sp::coll {

// scratch: room for n elements on the server, kept by the caller across calls.
template <class T>
void param_server_all_reduce(comm::Transport& t, T* data, size_t n, comm::Op op, T* scratch, int server = 0) {
  const int p = t.size(), r = t.rank();
  if (p == 1) return;
  const size_t bytes = n * sizeof(T);
  if (r == server) {
    t.set_phase("push");
    for (int w = 0; w < p; ++w) {
      if (w == server) continue;
      t.recv(scratch, bytes, w);  // one worker at a time: the server's link serialises them anyway
      comm::reduce_into(data, scratch, n, op);
    }
    t.set_phase("pull");
    for (int w = 0; w < p; ++w)
      if (w != server) t.isend(data, bytes, w, 0);
    t.wait_all();
  } else {
    t.set_phase("push");
    t.send(data, bytes, server);
    t.set_phase("pull");
    t.recv(data, bytes, server);
  }
}

}  // namespace sp::coll
