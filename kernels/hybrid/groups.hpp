#pragma once
// The three process groups of a (dp, tp, pp) layout, each a Transport over a
// communicator split from the world one (MPI_Comm_split, colour = the other
// two coordinates, key = the coordinate along the group), so group rank i is
// grid coordinate i. A group of one rank is a SelfTransport (no MPI calls),
// which also makes the step run in builds without MPI at one rank.
#include <memory>
#include <vector>

#include "kernels/comm/transport.hpp"
#include "kernels/hybrid/layout.hpp"

namespace sp::hybrid {

class Groups {
 public:
#ifdef SP_HAVE_MPI
  // base: the communicator the layout's ranks form (the world by default).
  Groups(const Layout& l, int rank, MPI_Comm base = sp::comm::world());
#else
  Groups(const Layout& l, int rank);
#endif
  ~Groups();
  Groups(const Groups&) = delete;
  Groups& operator=(const Groups&) = delete;

  GridCoord coord;
  comm::Transport& dp() { return *dp_; }
  comm::Transport& tp() { return *tp_; }
  comm::Transport& pp() { return *pp_; }
  // The sum of x over all ranks of the layout (MPI_Allreduce on the base
  // communicator; x itself without MPI): for decisions every rank must take
  // alike. Not part of any group's counted traffic.
  long long sum_over_layout(long long x);

 private:
  std::unique_ptr<comm::Transport> dp_, tp_, pp_;
#ifdef SP_HAVE_MPI
  std::vector<MPI_Comm> comms_;  // freed with the groups
  MPI_Comm base_ = MPI_COMM_NULL;
#endif
};

}  // namespace sp::hybrid
