#include "progress.hpp"

#include <cstdio>

#include "scaleproof/comm.hpp"

namespace sp {

std::string format_duration(double s) {
  char buf[32];
  const long t = static_cast<long>(s + 0.5);
  if (t < 60)
    std::snprintf(buf, sizeof buf, "%lds", t);
  else if (t < 3600)
    std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
  return buf;
}

Progress::Progress(std::string phase, size_t total)
    : phase_(std::move(phase)), total_(total), t0_(std::chrono::steady_clock::now()) {}

void Progress::print(size_t i, size_t finished, const std::string& what) const {
  if (comm::rank() != 0) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  std::string left = "";
  if (finished > 0 && finished < total_)
    left = ", ~" + format_duration(elapsed / static_cast<double>(finished) * static_cast<double>(total_ - finished)) +
           " left";
  std::printf("[%s %zu/%zu, %s elapsed%s] %s\n", phase_.c_str(), i, total_, format_duration(elapsed).c_str(),
              left.c_str(), what.c_str());
  std::fflush(stdout);
}

}  // namespace sp
