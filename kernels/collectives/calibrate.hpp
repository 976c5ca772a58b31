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
// collective.
inline std::vector<size_t> pingpong_sizes(size_t message_bytes) {
  std::vector<size_t> s = {8, 64, 512};
  for (size_t m : {message_bytes / 4, message_bytes / 2, message_bytes})
    if (m > s.back()) s.push_back(m);
  if (s.size() < 4) s.push_back(4096);
  return s;
}

// Median half round trip between ranks 0 and 1 per size; identical on every
// rank (other ranks wait). Zero at p = 1.
inline std::vector<double> pingpong_seconds(Transport& t, const std::vector<size_t>& sizes, int reps) {
  std::vector<double> out;
  const size_t maxb = *std::max_element(sizes.begin(), sizes.end());
  std::vector<char> buf(maxb, 1);
  const std::string saved = t.phase();
  t.set_phase("pingpong");
  for (size_t bytes : sizes) {
    std::vector<double> ts;
    if (t.size() >= 2 && t.rank() < 2) {
      const int other = 1 - t.rank();
      for (int i = -1; i < reps; ++i) {  // i = -1: warm-up
        Kokkos::Timer timer;
        if (t.rank() == 0) t.send(buf.data(), bytes, other), t.recv(buf.data(), bytes, other);
        else t.recv(buf.data(), bytes, other), t.send(buf.data(), bytes, other);
        if (i >= 0) ts.push_back(timer.seconds() / 2);
      }
    }
    out.push_back(comm::max(ts.empty() ? 0.0 : median(ts)));
  }
  t.set_phase(saved);
  return out;
}

// Seconds per byte of reduce_into on warm buffers of n elements (max over ranks).
template <class T>
double reduction_seconds_per_byte(size_t n, Op op, int reps) {
  n = std::max<size_t>(n, 1);
  std::vector<T> acc(n, T(1)), in(n, T(1));
  std::vector<double> ts;
  for (int i = -1; i < reps; ++i) {
    Kokkos::Timer timer;
    reduce_into(acc.data(), in.data(), n, op);
    if (i >= 0) ts.push_back(timer.seconds());
  }
  return comm::max(median(ts) / (n * sizeof(T)));
}

// The whole calibration for a collective whose largest message is
// message_bytes and whose reductions work on chunks of reduce_elems.
template <class T>
AlphaBetaGamma calibrate(Transport& t, size_t message_bytes, size_t reduce_elems, Op op, int reps = 9) {
  AlphaBetaGamma m;
  if (t.size() >= 2) {
    const auto sizes = pingpong_sizes(message_bytes);
    const auto secs = pingpong_seconds(t, sizes, reps);
    const LineFit f = fit_line_relative(std::vector<double>(sizes.begin(), sizes.end()), secs);
    m.alpha = std::max(0.0, f.intercept), m.beta = std::max(0.0, f.slope);
  }
  m.gamma = reduction_seconds_per_byte<T>(reduce_elems, op, reps);
  return m;
}

}  // namespace sp::coll
