#pragma once
// Bytes one rank holds, per category, as the trainer allocates and frees its
// buffers (every allocation of kernels/dataparallel/dp_trainer.hpp goes
// through it), with the peak of each category and of their sum. This is the
// "measured" side of the ZeRO memory verdicts: it counts what the code
// actually keeps alive, not what a formula says it should.
#include <array>
#include <cstddef>

namespace sp::dp {

enum class Mem { params, grads, optim, activations, comm, host_optim, count };
inline const char* mem_name(Mem m) {
  static const char* names[] = {"params", "grads", "optim", "activations", "comm", "host_optim"};
  return names[static_cast<int>(m)];
}

class MemoryTracker {
 public:
  static constexpr int N = static_cast<int>(Mem::count);
  void add(Mem c, double bytes) {
    cur_[idx(c)] += bytes;
    if (cur_[idx(c)] > peak_[idx(c)]) peak_[idx(c)] = cur_[idx(c)];
    double total = 0;
    for (double b : cur_) total += b;
    if (total > peak_total_) peak_total_ = total;
  }
  void sub(Mem c, double bytes) { cur_[idx(c)] -= bytes; }
  double current(Mem c) const { return cur_[idx(c)]; }
  double peak(Mem c) const { return peak_[idx(c)]; }
  double peak_total() const { return peak_total_; }
  // Peaks restart from what is held now (e.g. after setup, before a step).
  void reset_peaks() {
    peak_ = cur_;
    peak_total_ = 0;
    for (double b : cur_) peak_total_ += b;
  }

 private:
  static int idx(Mem c) { return static_cast<int>(c); }
  std::array<double, N> cur_{}, peak_{};
  double peak_total_ = 0;
};

}  // namespace sp::dp
