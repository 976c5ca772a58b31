#pragma once
// A group's collectives (ring all-reduce, reduce-scatter, all-gather of
// kernels/dataparallel/dp_comm.hpp on the group's Transport), counted: the
// number of collectives the step issues on the group (none on a group of
// one, where they are no-ops) beside the bytes its transport counts.
#include <cstdint>

#include "kernels/dataparallel/dp_comm.hpp"

namespace sp::hybrid {

template <class T>
class GroupComm {
 public:
  GroupComm(comm::Transport& t, dp::MemoryTracker& mem) : t_(t), c_(t, mem, 0) {}
  void all_reduce(T* x, size_t n) { count(), c_.all_reduce(x, n, 0); }
  void reduce_scatter(T* x, size_t n) { count(), c_.reduce_scatter(x, n, 0); }
  void all_gather(T* x, size_t n) { count(), c_.all_gather(x, n, 0); }
  comm::Transport& transport() { return t_; }
  int size() const { return t_.size(); }
  int rank() const { return t_.rank(); }
  int64_t collectives = 0;

 private:
  void count() { collectives += t_.size() > 1 ? 1 : 0; }
  comm::Transport& t_;
  dp::DpComm<T> c_;
};

}  // namespace sp::hybrid
