#include "kernels/hybrid/groups.hpp"

#include <stdexcept>

namespace sp::hybrid {

#ifdef SP_HAVE_MPI
Groups::Groups(const Layout& l, int rank, MPI_Comm base) : coord(grid_coord(l, rank)), base_(base) {
#else
Groups::Groups(const Layout& l, int rank) : coord(grid_coord(l, rank)) {
#endif
  const GridCoord c = coord;
  auto make = [&](int size, int colour, int key) -> std::unique_ptr<comm::Transport> {
#ifdef SP_HAVE_MPI
    // Every rank takes part in every split (MPI_Comm_split is collective),
    // also for groups of one, whose communicator is then not used.
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(base, colour, key, &sub);
    comms_.push_back(sub);
    if (size > 1) return std::make_unique<comm::MpiTransport>(sub);
#else
    (void)colour, (void)key;
    if (size > 1) throw std::runtime_error("hybrid: groups of more than one rank need an MPI build");
#endif
    return std::make_unique<comm::SelfTransport>();
  };
  tp_ = make(l.tp, c.pp * l.dp + c.dp, c.tp);
  dp_ = make(l.dp, c.pp * l.tp + c.tp, c.dp);
  pp_ = make(l.pp, c.dp * l.tp + c.tp, c.pp);
}

long long Groups::sum_over_layout(long long x) {
#ifdef SP_HAVE_MPI
  long long s = 0;
  MPI_Allreduce(&x, &s, 1, MPI_LONG_LONG, MPI_SUM, base_);
  return s;
#else
  return x;
#endif
}

Groups::~Groups() {
  dp_.reset(), tp_.reset(), pp_.reset();
#ifdef SP_HAVE_MPI
  for (auto& c : comms_) MPI_Comm_free(&c);
#endif
}

}  // namespace sp::hybrid
