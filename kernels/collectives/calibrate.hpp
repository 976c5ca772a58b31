#pragma once
// Run-time calibration of the alpha-beta-gamma model on this machine:
// alpha and beta from timing messages the way the algorithm sends them
// (t = alpha + bytes * beta, Hockney 1994), gamma from timing the same
// Kokkos reduction kernel the algorithms use (seconds per byte reduced).
//
// Two link patterns (see link_pattern() in model.hpp):
// - one way: a ping-pong between ranks 0 and 1, half the round trip timed
//   by the initiator alone (OSU's osu_latency). Trees, chains and the
//   parameter server move data one way at a time.
// - exchange: every rank sends to its right neighbour while receiving from
//   its left one, timed as one MPI_Sendrecv (a ring step; OSU's osu_bibw
//   pattern). Ring, Rabenseifner and recursive-doubling steps are such
//   exchanges; on a shared-memory link both directions share the memory
//   system, so a one-way beta mispredicts them (measured here: the ring ran
//   25-35% faster than a ping-pong beta predicted at 256 KiB - 1 MiB).
//   The exchanges and gamma's reduction are timed in a ring cycle (reduce-
//   scatter step, reduction, all-gather step) on two slices of the buffer,
//   so that every line is in the coherence state a ring step finds it in.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "kernels/collectives/model.hpp"
#include "kernels/collectives/ring.hpp"

namespace sp::coll {

struct LineFit {
  double intercept = 0, slope = 0;
};

// Least squares for y = intercept + slope * x, minimising the relative
// residuals (weights 1/y^2): with sizes spanning several decades an
// unweighted fit lets the largest size decide everything and leaves the
// intercept (alpha) to noise; relative weighting lets the small sizes fix
// alpha and the large ones beta.
inline LineFit fit_line_relative(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) throw std::invalid_argument("fit needs >= 2 points");
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(y[i] > 0)) throw std::invalid_argument("fit needs positive times");
    const double w = 1 / (y[i] * y[i]);
    sw += w, sx += w * x[i], sy += w * y[i], sxx += w * x[i] * x[i], sxy += w * x[i] * y[i];
  }
  const double det = sw * sxx - sx * sx;
  // det is a difference of near-equal terms when all x coincide: compare
  // it with its own scale, not with 0.
  if (!(det > 1e-12 * sw * sxx)) throw std::invalid_argument("fit needs two distinct sizes");
  LineFit f;
  f.slope = (sw * sxy - sx * sy) / det;
  f.intercept = (sy - f.slope * sx) / sw;
  return f;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// Sizes for the ping-pong: a latency cluster (8 B .. 512 B) and a bandwidth
// cluster around the message size the algorithm actually sends (m/4 .. m),
// so beta is measured in the same protocol and cache regime as the
// collective. Small collectives (m <= 2 KiB) fit one line through all.
inline std::vector<size_t> pingpong_sizes(size_t message_bytes) {
  std::vector<size_t> s = {8, 64, 512};
  for (size_t m : {message_bytes / 4, message_bytes / 2, message_bytes})
    if (m > s.back()) s.push_back(m);
  if (s.size() < 4) s.push_back(4096);
  return s;
}

// alpha, beta and gamma for one collective, sampled on the collective's own
// buffer (its contents are clobbered): ping-pong messages and one-way
// reductions at successive offsets of `arena`, the ring cycle on its first
// two slices, so they meet the same memory and caches as the collective (a
// small private buffer would stay in cache and time a faster link). A
// caller may interleave sample() with the timed calls, so that both see the
// same background load; fit() takes the medians.
//
// The one-way (ping-pong) calibration is always taken: it is the textbook
// one (Hockney), reported beside the exchange calibration for the algorithms
// whose steps are exchanges. Their exchanges are timed in the ring's cycle,
// half each: into the scratch chunk (a reduce-scatter step) and into the
// buffer itself (an all-gather step); on this shared-memory machine the
// state of the lines sent and written changes the per-byte cost.
template <class T>
class Calibrator {
 public:
  // message_bytes: the largest message the algorithm sends; reduce_elems:
  // the chunk it reduces per step; scratch: >= reduce_elems elements.
  Calibrator(Transport& t, size_t message_bytes, size_t reduce_elems, Op op, T* arena, size_t arena_elems,
             T* scratch, Link link = Link::one_way)
      : t_(t), link_(link), sizes_(pingpong_sizes(message_bytes)), pp_(sizes_.size()), ex_(sizes_.size()), op_(op),
        scratch_(scratch) {
    bytes_ = reinterpret_cast<char*>(arena), nbytes_ = arena_elems * sizeof(T);
    if (nbytes_ < sizes_.back()) own_.assign(sizes_.back(), 1), bytes_ = own_.data(), nbytes_ = own_.size();
    arena_ = arena, elems_ = arena_elems;
    red_ = std::max<size_t>(1, std::min(reduce_elems, arena_elems));
    sample_links(-1);  // warm-up
    if (link_ != Link::exchange || t_.size() < 2) sample_reduction(-1);
  }

  void sample() {
    sample_links(k_);
    if (link_ != Link::exchange || t_.size() < 2) sample_reduction(k_);  // else the ring cycle's reduction
    ++k_;
  }

  // The calibration of the algorithm's own link pattern.
  AlphaBetaGamma fit() const { return fit(link_); }

  CycleTimes cycle() const {
    auto med = [](const std::vector<double>& v) { return comm::max(v.empty() ? 0.0 : median(v)); };
    return {med(cyc_rs_), med(cyc_red_), med(cyc_ag_)};
  }

  AlphaBetaGamma fit(Link l) const {
    AlphaBetaGamma m;
    const auto& samples = l == Link::exchange ? ex_ : pp_;
    if (t_.size() >= 2) {
      std::vector<double> secs;
      for (auto& v : samples) secs.push_back(comm::max(v.empty() ? 0.0 : median(v)));
      // With a bandwidth cluster (m/4, m/2, m), the line through it alone:
      // its intercept then carries the per-message cost of the protocol the
      // algorithm's messages actually use (MPICH's rendezvous above the eager
      // limit), its slope the per-byte cost at that size. Otherwise all points.
      const size_t first = sizes_.size() > 4 ? sizes_.size() - 3 : 0;
      const LineFit f = fit_line_relative(std::vector<double>(sizes_.begin() + first, sizes_.end()),
                                          std::vector<double>(secs.begin() + first, secs.end()));
      m.alpha = std::max(0.0, f.intercept), m.beta = std::max(0.0, f.slope);
    }
    m.gamma = comm::max(red_pb_.empty() ? 0.0 : median(red_pb_));
    return m;
  }

 private:
  // One sample per size of each link pattern. Each timed message is
  // preceded by an untimed empty one between the same partners, so that a
  // partner still busy elsewhere (skew) is not counted as transfer time.
  void sample_links(long k) {
    if (t_.size() < 2) return;
    const std::string saved = t_.phase();
    t_.set_phase("pingpong");  // calibration traffic, kept apart from the algorithm's phases
    for (size_t s = 0; s < sizes_.size(); ++s) {
      const size_t b = sizes_[s], slots = nbytes_ / b, j = static_cast<size_t>(k + 1) % slots;
      char* buf = bytes_ + j * b;
      const double one_way = half_round_trip(buf, b);
      if (k >= 0 && one_way >= 0) pp_[s].push_back(one_way);
      if (link_ != Link::exchange) continue;
      // The ring's own cycle at p = 2 on two slices A and B: a reduce-
      // scatter step (send B, which this rank received into last, receive
      // into the scratch), the reduction into A, then an all-gather step
      // (send A, just reduced; receive into B, which the neighbour has just
      // read). Run once untimed, to leave each line in the state a ring call
      // leaves it, then timed. The lines' coherence state is what costs when
      // the two vCPUs sit on different last-level caches (this VM's slow
      // state; 512 KiB, slow / fast): all-gather step 252 / 46 us, reduce-
      // scatter step 79 / 42 us, reduction 219 / 40 us. An exchange or a
      // reduction on lines in another state misses that.
      char* A = bytes_;
      char* B = slots >= 2 ? bytes_ + b : own_rbuf(0, b);
      char* scr = b <= red_ * sizeof(T) ? reinterpret_cast<char*>(scratch_) : own_rbuf(1, b);
      ring_cycle(A, B, scr, b);
      const Cycle c = ring_cycle(A, B, scr, b);
      if (k < 0) continue;
      ex_[s].push_back(0.5 * (c.reduce_scatter + c.all_gather));
      if (s + 1 < sizes_.size()) continue;
      if (c.reduced_bytes > 0) red_pb_.push_back(c.reduce / c.reduced_bytes);
      cyc_rs_.push_back(c.reduce_scatter), cyc_red_.push_back(c.reduce), cyc_ag_.push_back(c.all_gather);
    }
    t_.set_phase(saved);
  }
  // Ranks 0 and 1; the initiator's half round trip (OSU's osu_latency), -1 elsewhere.
  double half_round_trip(char* buf, size_t b) {
    const int r = t_.rank();
    if (r >= 2) return -1;
    const int other = 1 - r;
    char none = 0;
    if (r == 0) {
      t_.send(&none, 0, other), t_.recv(&none, 0, other);  // both now at this point
      Kokkos::Timer timer;
      t_.send(buf, b, other), t_.recv(buf, b, other);
      return timer.seconds() / 2;
    }
    t_.recv(&none, 0, other), t_.send(&none, 0, other);
    t_.recv(buf, b, other), t_.send(buf, b, other);
    return -1;
  }
  // Every rank: send b bytes right while receiving b bytes from the left (a ring step).
  double exchange(const char* buf, char* rbuf, size_t b) {
    const int p = t_.size(), r = t_.rank(), right = (r + 1) % p, left = (r - 1 + p) % p;
    char none = 0, got = 0;
    t_.sendrecv(&none, 0, left, &got, 0, right);  // both partners now at this point
    t_.sendrecv(&none, 0, right, &got, 0, left);
    Kokkos::Timer timer;
    t_.sendrecv(buf, b, right, rbuf, b, left);
    return timer.seconds();
  }
  struct Cycle {
    double reduce_scatter = 0, reduce = 0, all_gather = 0, reduced_bytes = 0;
  };
  Cycle ring_cycle(char* A, char* B, char* scr, size_t b) {
    Cycle c;
    c.reduce_scatter = exchange(B, scr, b);
    const size_t n = std::min(b / sizeof(T), red_);
    Kokkos::Timer timer;
    if (n > 0) reduce_into(reinterpret_cast<T*>(A), reinterpret_cast<const T*>(scr), n, op_);
    c.reduce = timer.seconds(), c.reduced_bytes = static_cast<double>(n * sizeof(T));
    c.all_gather = exchange(A, B, b);
    return c;
  }
  // Room of our own when the collective's buffer is too small (tiny collectives): two buffers.
  char* own_rbuf(int i, size_t b) {
    if (rbuf_[i].size() < b) rbuf_[i].assign(b, 0);
    return rbuf_[i].data();
  }
  // gamma for the one-way algorithms (and a single rank): the reduction
  // into a slot of the buffer other than the one just sent.
  void sample_reduction(long k) {
    const size_t slots = elems_ / red_;
    T* acc = arena_ + static_cast<size_t>(k + 2) % slots * red_;
    Kokkos::Timer timer;
    reduce_into(acc, scratch_, red_, op_);
    if (k >= 0) red_pb_.push_back(timer.seconds() / static_cast<double>(red_ * sizeof(T)));
  }

  Transport& t_;
  Link link_;
  std::vector<size_t> sizes_;
  std::vector<std::vector<double>> pp_, ex_;  // per size: one-way and exchange samples
  std::vector<double> red_pb_;  // reduction samples, seconds per byte
  std::vector<double> cyc_rs_, cyc_red_, cyc_ag_;  // the ring cycle's parts at the largest message
  Op op_;
  T* scratch_;
  T* arena_ = nullptr;
  size_t elems_ = 0, red_ = 1;
  char* bytes_ = nullptr;
  size_t nbytes_ = 0;
  std::vector<char> own_;   // tiny collectives: the latency sizes need more room than their buffer
  std::vector<char> rbuf_[2];  // exchange room when the buffer holds one message only
  long k_ = 0;
};

}  // namespace sp::coll
