#pragma once
// Run-time calibration of the alpha-beta-gamma model on the machine the
// collective runs on:
// alpha and beta from timing messages the way the algorithm sends them
// (t = alpha + bytes * beta, Hockney 1994), gamma from timing the same
// Kokkos reduction kernel the algorithms use (seconds per byte reduced).
//
// Each algorithm is calibrated on its own cycle (its record's `cycle`,
// algorithms.cpp), in one of two link patterns (the cycle's `link`):
// - exchange: every rank sends to its right neighbour while receiving from
//   its left one, timed as one MPI_Sendrecv (a ring step; OSU's osu_bibw
//   pattern). Ring, Rabenseifner and recursive-doubling steps are such
//   exchanges; on a shared-memory link both directions share the memory
//   system, so a step that sends and receives at once does not cost a
//   one-way transfer, and a one-way beta must not be used to predict it
//   (the nccl-tests command prints the error it would give, column err(pp)).
// - one way: rank 0 or 1 sends while the other receives (trees, chains and
//   the parameter server move data one way at a time).
// The cycle's transfers and reduction run on slices of the collective's own
// buffer in the algorithm's order, so every line is in the coherence state
// the algorithm's own steps find it in. The textbook ping-pong (half the
// round trip, timed by the initiator; OSU's osu_latency) is reported beside.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "scaleproof/measure.hpp"

#include "kernels/collectives/model.hpp"
#include "kernels/comm/ring.hpp"

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

// The line through (x0, y0) that best fits the other points (relative
// weights, as above): with x0 the message size the algorithm sends, the
// model is exact there and the other points set only the slope. A free
// line through a bandwidth cluster (m/4, m/2, m) need not pass through its
// own point at m wherever the per-byte cost bends (as when the buffers
// outgrow the last-level cache), and m is the message the ring sends at
// every step. The intercept is kept >= 0 (then the line is the one through
// the origin and (x0, y0)).
inline LineFit fit_line_through(const std::vector<double>& x, const std::vector<double>& y, double x0, double y0) {
  if (x.size() != y.size() || x.empty()) throw std::invalid_argument("fit needs >= 1 other point");
  if (!(x0 > 0) || !(y0 > 0)) throw std::invalid_argument("fit needs a positive anchor");
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(y[i] > 0)) throw std::invalid_argument("fit needs positive times");
    const double w = 1 / (y[i] * y[i]), dx = x[i] - x0;
    num += w * dx * (y[i] - y0), den += w * dx * dx;
  }
  if (!(den > 0)) throw std::invalid_argument("fit needs two distinct sizes");
  LineFit f;
  f.slope = std::max(0.0, num / den);
  f.intercept = y0 - f.slope * x0;
  if (f.intercept < 0) f.intercept = 0, f.slope = y0 / x0;
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
// buffer (its contents are clobbered), so that they meet the same memory and
// caches as the collective (a small private buffer would stay in cache and
// time a faster link). A caller may interleave sample() with the timed
// calls, so that both see the same background load; fit() takes the medians.
//
// Two calibrations are taken at every size:
// - the algorithm's own cycle (its record's `cycle`): its transfers
//   and its reduction, on slices A, B of the buffer and the scratch, run once
//   untimed and then timed, so that every line is in the state the
//   algorithm's own calls leave it in. Its transfers give alpha and beta,
//   its reduction gamma. This is the model's calibration.
// - the textbook one-way ping-pong (Hockney; OSU's osu_latency), reported
//   beside it (fit_one_way()): it sends back the lines it has just received,
//   which no algorithm here does.
template <class T>
class Calibrator {
 public:
  // message_bytes: the largest message the algorithm sends; reduce_elems:
  // the chunk it reduces per step; scratch: >= reduce_elems elements.
  Calibrator(comm::Transport& t, size_t message_bytes, size_t reduce_elems, comm::Op op, T* arena, size_t arena_elems,
             T* scratch, CyclePattern pattern)
      : t_(t),
        pattern_(std::move(pattern)),
        sizes_(pingpong_sizes(message_bytes)),
        pp_(sizes_.size()),
        cyc_(sizes_.size()),
        op_(op),
        scratch_(scratch) {
    bytes_ = reinterpret_cast<char*>(arena), nbytes_ = arena_elems * sizeof(T);
    if (nbytes_ < sizes_.back()) own_.assign(sizes_.back(), 1), bytes_ = own_.data(), nbytes_ = own_.size();
    arena_ = arena, elems_ = arena_elems;
    red_ = std::max<size_t>(1, std::min(reduce_elems, arena_elems));
    for (auto& s : pattern_.steps) has_reduce_ = has_reduce_ || s.kind == CycleStep::reduce;
    sample_links(-1);  // warm-up
    if (!cycle_reduces()) sample_reduction(-1);
  }

  void sample() {
    sample_links(k_);
    if (!cycle_reduces()) sample_reduction(k_);  // else the cycle's reduction
    ++k_;
  }

  // The calibration on the algorithm's own cycle (the model's).
  AlphaBetaGamma fit() const { return fit_samples(cyc_); }
  // The textbook one: alpha and beta from the ping-pong, gamma as fit()'s.
  AlphaBetaGamma fit_one_way() const { return fit_samples(pp_); }

  // The cycle's parts at the largest message: first transfer, reduction,
  // last transfer (0 where the cycle has none).
  CycleTimes cycle() const {
    auto med = [](const std::vector<double>& v) { return comm::max(v.empty() ? 0.0 : median(v)); };
    return {med(part_first_), med(part_reduce_), med(part_last_)};
  }

 private:
  bool cycle_reduces() const { return has_reduce_ && t_.size() >= 2; }

  AlphaBetaGamma fit_samples(const std::vector<std::vector<double>>& samples) const {
    AlphaBetaGamma m;
    if (t_.size() >= 2) {
      std::vector<double> secs;
      for (auto& v : samples) secs.push_back(comm::max(v.empty() ? 0.0 : median(v)));
      // With a bandwidth cluster (m/4, m/2, m), the line through it alone,
      // pinned at m: its intercept then carries the per-message cost of the
      // protocol the algorithm's messages actually use (MPICH's rendezvous
      // above the eager limit), its slope the per-byte cost near m, and it
      // is exact at m, the message the ring sends at every step. Otherwise
      // (messages <= 2 KiB) a free line through all points.
      LineFit f;
      if (sizes_.size() > 4) {
        const size_t first = sizes_.size() - 3, last = sizes_.size() - 1;
        f = fit_line_through(std::vector<double>(sizes_.begin() + first, sizes_.begin() + last),
                             std::vector<double>(secs.begin() + first, secs.begin() + last),
                             static_cast<double>(sizes_[last]), secs[last]);
      } else {
        f = fit_line_relative(std::vector<double>(sizes_.begin(), sizes_.end()), secs);
      }
      m.alpha = std::max(0.0, f.intercept), m.beta = std::max(0.0, f.slope);
    }
    m.gamma = comm::max(red_pb_.empty() ? 0.0 : median(red_pb_));
    return m;
  }

  // One sample per size of each calibration. Each timed transfer is
  // preceded by an empty one between the same partners, so that a partner
  // still busy elsewhere (skew) is not counted as transfer time.
  void sample_links(long k) {
    if (t_.size() < 2) return;
    const std::string saved = t_.phase();
    t_.set_phase("pingpong");  // calibration traffic, kept apart from the algorithm's phases
    const size_t bandwidth_first = sizes_.size() > 4 ? sizes_.size() - 3 : sizes_.size();
    for (size_t s = 0; s < sizes_.size(); ++s) {
      const size_t b = sizes_[s], slots = nbytes_ / b, j = static_cast<size_t>(k + 1) % slots;
      // The cycle. Exchanges: on the first two slices of the largest message
      // m (a ring step's chunks), smaller messages at their starts, so that
      // every size writes only the lines the algorithm writes. At p = 2 the
      // ring's rank r reduces into chunk r and sends the other, so A is
      // slice r here; the chunk a reduce-scatter sends is never written.
      // One-way transfers: over successive slices, sweeping the buffer at
      // the bandwidth sizes as a chain streams it (up to 256 slices). The
      // whole sweep once untimed, to leave each line in the state the
      // algorithm's calls leave it, then timed.
      const bool one_way = pattern_.link == Link::one_way;
      const size_t span = one_way && s >= bandwidth_first ? std::min<size_t>(slots, 256) : 1;
      const size_t m = sizes_.back(), slots_m = nbytes_ / m;
      const size_t mine = slots_m >= 2 ? static_cast<size_t>(t_.rank() % 2) : 0;
      auto at = [&](size_t i, char* slot[3]) {
        if (one_way) {
          const size_t a = (j + i) % slots;
          slot[0] = bytes_ + a * b;
          slot[1] = slots >= 2 ? bytes_ + (a + 1) % slots * b : own_rbuf(0, b);
        } else {
          slot[0] = bytes_ + mine * m;
          slot[1] = slots_m >= 2 ? bytes_ + (mine + 1) % slots_m * m : own_rbuf(0, m);
        }
        slot[2] = b <= red_ * sizeof(T) ? reinterpret_cast<char*>(scratch_) : own_rbuf(1, b);
      };
      char* slot[3];
      for (size_t i = 0; i < span; ++i) at(i, slot), run_cycle(slot, b);
      Parts c;
      for (size_t i = 0; i < span; ++i) at(i, slot), c += run_cycle(slot, b);
      // The textbook ping-pong on a buffer of its own: it writes back into
      // the lines it sends, which would leave the cycle's in a state that
      // none of the algorithms leaves them in.
      const double one_way_pp = half_round_trip(own_rbuf(2, b), b);
      if (k < 0) continue;
      if (one_way_pp >= 0) pp_[s].push_back(one_way_pp);
      if (c.transfers > 0) cyc_[s].push_back(c.transfer / c.transfers);
      if (s + 1 < sizes_.size()) continue;
      if (c.reduced_bytes > 0) red_pb_.push_back(c.reduce / c.reduced_bytes);
      const double per = 1.0 / static_cast<double>(span);
      if (c.first >= 0) part_first_.push_back(c.first * per);
      if (c.reduce >= 0 && has_reduce_) part_reduce_.push_back(c.reduce * per);
      if (c.last >= 0 && c.transfers > static_cast<int>(span)) part_last_.push_back(c.last * per);
    }
    t_.set_phase(saved);
  }

  // One cycle's times on this rank (or a sweep's sums): its transfers, the
  // first and last of them, and its reduction; -1 where it has none.
  struct Parts {
    double transfer = 0;
    int transfers = 0;
    double first = -1, last = -1, reduce = -1, reduced_bytes = 0;
    Parts& operator+=(const Parts& o) {
      auto add = [](double& a, double b) { a = b < 0 ? a : (a < 0 ? b : a + b); };
      transfer += o.transfer, transfers += o.transfers, reduced_bytes += o.reduced_bytes;
      add(first, o.first), add(last, o.last), add(reduce, o.reduce);
      return *this;
    }
  };
  // The cycle's steps in order, on slices slot[A], slot[B], slot[S] of b bytes.
  // Ranks 2 and up take part in exchanges only.
  Parts run_cycle(char* const slot[3], size_t b) {
    Parts c;
    const int r = t_.rank();
    for (const CycleStep& st : pattern_.steps) {
      char* from = slot[static_cast<int>(st.from)];
      char* to = slot[static_cast<int>(st.to)];
      if (st.kind == CycleStep::reduce) {
        if (pattern_.link == Link::one_way && r != 0) continue;
        const size_t n = std::min(b / sizeof(T), red_);
        c.reduce = clock_.time("reduce", [&] {
          if (n > 0) comm::reduce_into(reinterpret_cast<T*>(to), reinterpret_cast<const T*>(from), n, op_);
        });
        c.reduced_bytes = static_cast<double>(n * sizeof(T));
        continue;
      }
      const double sec = st.kind == CycleStep::exchange ? exchange(from, to, b)
                                                        : one_way(from, to, b, st.kind == CycleStep::up ? 1 : 0);
      if (sec < 0) continue;
      c.transfer += sec, ++c.transfers;
      if (c.first < 0) c.first = sec;
      c.last = sec;
    }
    return c;
  }
  // Ranks 0 and 1; the initiator's half round trip (OSU's osu_latency), -1 elsewhere.
  double half_round_trip(char* buf, size_t b) {
    const int r = t_.rank();
    if (r >= 2) return -1;
    const int other = 1 - r;
    char none = 0;
    if (r == 0) {
      t_.send(&none, 0, other), t_.recv(&none, 0, other);  // both now at this point
      return clock_.time("round trip", [&] { t_.send(buf, b, other), t_.recv(buf, b, other); }) / 2;
    }
    t_.recv(&none, 0, other), t_.send(&none, 0, other);
    t_.recv(buf, b, other), t_.send(buf, b, other);
    return -1;
  }
  // Ranks 0 and 1: `sender` sends b bytes from `from`, the other receives
  // them into `to`; each times its own side from a common start. -1 elsewhere.
  double one_way(const char* from, char* to, size_t b, int sender) {
    const int r = t_.rank();
    if (r >= 2) return -1;
    const int other = 1 - r;
    char none = 0, got = 0;
    t_.sendrecv(&none, 0, other, &got, 0, other);  // both partners now at this point
    return clock_.time("one way", [&] {
      if (r == sender)
        t_.send(from, b, other);
      else
        t_.recv(to, b, other);
    });
  }
  // Every rank: send b bytes right while receiving b bytes from the left (a ring step).
  double exchange(const char* buf, char* rbuf, size_t b) {
    const int p = t_.size(), r = t_.rank(), right = (r + 1) % p, left = (r - 1 + p) % p;
    char none = 0, got = 0;
    t_.sendrecv(&none, 0, left, &got, 0, right);  // both partners now at this point
    t_.sendrecv(&none, 0, right, &got, 0, left);
    return clock_.time("exchange", [&] { t_.sendrecv(buf, b, right, rbuf, b, left); });
  }
  // Room of our own: when the collective's buffer holds too few slices, and for the ping-pong.
  char* own_rbuf(int i, size_t b) {
    if (rbuf_[i].size() < b) rbuf_[i].assign(b, 0);
    return rbuf_[i].data();
  }
  // gamma where the cycle has no reduction (and a single rank): the
  // reduction into a slot of the buffer, reported only.
  void sample_reduction(long k) {
    const size_t slots = elems_ / red_;
    T* acc = arena_ + static_cast<size_t>(k + 2) % slots * red_;
    const double s = clock_.time("reduce", [&] { comm::reduce_into(acc, scratch_, red_, op_); });
    if (k >= 0) red_pb_.push_back(s / static_cast<double>(red_ * sizeof(T)));
  }

  comm::Transport& t_;
  PhaseClock clock_;  // the harness's clock: every sample below is one of its readings
  CyclePattern pattern_;
  bool has_reduce_ = false;
  std::vector<size_t> sizes_;
  std::vector<std::vector<double>> pp_, cyc_;                 // per size: ping-pong and cycle transfer samples
  std::vector<double> red_pb_;                                // reduction samples, seconds per byte
  std::vector<double> part_first_, part_reduce_, part_last_;  // the cycle's parts at the largest message
  comm::Op op_;
  T* scratch_;
  T* arena_ = nullptr;
  size_t elems_ = 0, red_ = 1;
  char* bytes_ = nullptr;
  size_t nbytes_ = 0;
  std::vector<char> own_;      // tiny collectives: the latency sizes need more room than their buffer
  std::vector<char> rbuf_[3];  // room when the buffer holds one message only; the ping-pong's
  long k_ = 0;
};

}  // namespace sp::coll
