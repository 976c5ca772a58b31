#pragma once
// Run-time calibration of the alpha-beta-gamma model on this machine:
// alpha and beta from a ping-pong between ranks 0 and 1 (half the round
// trip, t = alpha + bytes * beta, Hockney 1994), gamma from timing the same
// Kokkos reduction kernel the algorithms use (seconds per byte reduced).
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
// buffer: ping-pong messages and reduced chunks are cut from successive
// offsets of `arena` (its contents are clobbered), so they stream through
// the same memory as the collective and meet the same caches (a small
// private buffer would stay in cache and time a faster link than the
// collective sees). A caller may interleave sample() with the timed calls,
// so that both see the same background load; fit() takes the medians.
template <class T>
class Calibrator {
 public:
  // message_bytes: the largest message the algorithm sends; reduce_elems:
  // the chunk it reduces per step; scratch: >= reduce_elems elements.
  Calibrator(Transport& t, size_t message_bytes, size_t reduce_elems, Op op, T* arena, size_t arena_elems,
             const T* scratch)
      : t_(t), sizes_(pingpong_sizes(message_bytes)), pp_(sizes_.size()), op_(op), scratch_(scratch) {
    bytes_ = reinterpret_cast<char*>(arena), nbytes_ = arena_elems * sizeof(T);
    if (nbytes_ < sizes_.back()) own_.assign(sizes_.back(), 1), bytes_ = own_.data(), nbytes_ = own_.size();
    arena_ = arena, elems_ = arena_elems;
    red_ = std::max<size_t>(1, std::min(reduce_elems, arena_elems));
    sample_pingpong(-1), sample_reduction(-1);  // warm-up
  }

  void sample() {
    sample_pingpong(k_), sample_reduction(k_);
    ++k_;
  }

  AlphaBetaGamma fit() const {
    AlphaBetaGamma m;
    if (t_.size() >= 2) {
      std::vector<double> secs;
      for (auto& v : pp_) secs.push_back(comm::max(v.empty() ? 0.0 : median(v)));
      // With a bandwidth cluster (m/4, m/2, m), the line through it alone:
      // its intercept then carries the per-message cost of the protocol the
      // algorithm's messages actually use (MPICH's rendezvous above the eager
      // limit), its slope the per-byte cost at that size. Otherwise all points.
      const size_t first = sizes_.size() > 4 ? sizes_.size() - 3 : 0;
      const LineFit f = fit_line_relative(std::vector<double>(sizes_.begin() + first, sizes_.end()),
                                          std::vector<double>(secs.begin() + first, secs.end()));
      m.alpha = std::max(0.0, f.intercept), m.beta = std::max(0.0, f.slope);
    }
    m.gamma = comm::max(red_s_.empty() ? 0.0 : median(red_s_) / (red_ * sizeof(T)));
    return m;
  }

 private:
  // Half a round trip between ranks 0 and 1 per size (the others wait).
  void sample_pingpong(long k) {
    if (t_.size() < 2 || t_.rank() >= 2) return;
    const std::string saved = t_.phase();
    t_.set_phase("pingpong");
    const int other = 1 - t_.rank();
    for (size_t s = 0; s < sizes_.size(); ++s) {
      const size_t b = sizes_[s];
      char* buf = bytes_ + static_cast<size_t>(k + 1) % (nbytes_ / b) * b;
      Kokkos::Timer timer;
      if (t_.rank() == 0) t_.send(buf, b, other), t_.recv(buf, b, other);
      else t_.recv(buf, b, other), t_.send(buf, b, other);
      if (k >= 0) pp_[s].push_back(timer.seconds() / 2);
    }
    t_.set_phase(saved);
  }
  void sample_reduction(long k) {
    T* acc = arena_ + static_cast<size_t>(k + 1) % (elems_ / red_) * red_;
    Kokkos::Timer timer;
    reduce_into(acc, scratch_, red_, op_);
    if (k >= 0) red_s_.push_back(timer.seconds());
  }

  Transport& t_;
  std::vector<size_t> sizes_;
  std::vector<std::vector<double>> pp_;
  std::vector<double> red_s_;
  Op op_;
  const T* scratch_;
  T* arena_ = nullptr;
  size_t elems_ = 0, red_ = 1;
  char* bytes_ = nullptr;
  size_t nbytes_ = 0;
  std::vector<char> own_;  // tiny collectives: the latency sizes need more room than their buffer
  long k_ = 0;
};

}  // namespace sp::coll
