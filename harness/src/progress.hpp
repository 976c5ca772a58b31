#pragma once
// Progress of a long phase on the console: "[check 12/486, 1m05s elapsed,
// ~3m20s left] what". The estimate assumes the remaining steps cost what the
// finished ones did on average; it is a guide for the person waiting, never a
// measurement. Only rank 0 prints.
#include <chrono>
#include <string>

namespace sp {

class Progress {
 public:
  Progress(std::string phase, size_t total);
  // Step i (1-based) of total is about to run: i - 1 are done.
  void start(size_t i, const std::string& what) { print(i, i - 1, what); }
  // Step i of total has finished.
  void done(size_t i, const std::string& what) { print(i, i, what); }

 private:
  void print(size_t i, size_t finished, const std::string& what) const;
  std::string phase_;
  size_t total_;
  std::chrono::steady_clock::time_point t0_;
};

std::string format_duration(double seconds);  // "45s", "3m05s", "1h02m"

}  // namespace sp
