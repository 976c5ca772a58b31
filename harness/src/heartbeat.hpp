#pragma once
// Per-rank heartbeat for the watchdogs (watchdog.hpp in the ranks, and the
// launch watchdog of `scaleproof scale` / `qualify`). Each rank maps a small file
// <dir>/rank<R>.hb and records, with plain memory stores (cheap enough for
// every timed call), which technique and phase it is in and how many
// technique calls it entered and left. After a launch is killed, the parent
// reads the files: a rank that entered a call it never left is the one that
// hung or died; the others were waiting for it.
#include <cstdint>
#include <string>
#include <vector>

namespace sp::heartbeat {

struct Beat {
  char technique[96];
  char phase[16];    // setup | run | check | teardown
  int32_t mpi_call;  // the blocking MPI call the rank is in: 0 none, else 1 + index in mpi_call_names()
  uint64_t entered;  // technique calls entered
  uint64_t left;     // technique calls returned
  int32_t rank;
  int32_t pid;
  uint64_t mpi_returned;  // blocking MPI calls returned: progress outside technique calls too
};

void start();                        // in SP_HEARTBEAT_DIR; no-op when unset; idempotent
void start(const std::string& dir);  // in `dir`; idempotent
// at() labels the calls that follow; enter()/leave() only count, so the
// timed loop pays two increments per call and no string copies.
void at(const std::string& technique, const char* phase);
void enter();
void leave();
// Blocking MPI calls (heartbeat_mpi.cpp): one integer store each way.
void mpi_enter(int call);  // 1 + index in mpi_call_names()
void mpi_leave();
const std::vector<std::string>& mpi_call_names();

// RAII: label and enter on construction, leave on destruction (not reached if the call hangs or dies).
struct Call {
  Call(const std::string& technique, const char* phase) { at(technique, phase), enter(); }
  ~Call() { leave(); }
};

std::vector<Beat> read_all(const std::string& dir);  // sorted by rank
// One line naming the rank(s) stuck inside a technique call, or saying none was.
std::string diagnose(const std::string& dir, int nranks);

}  // namespace sp::heartbeat
