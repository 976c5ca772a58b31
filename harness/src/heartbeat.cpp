#include "heartbeat.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "scaleproof/comm.hpp"

namespace fs = std::filesystem;

namespace sp::heartbeat {

namespace {
Beat* beat = nullptr;
}

void mpi_wrappers_linked();  // heartbeat_mpi.cpp

void mpi_enter(int call) {
  if (beat) beat->mpi_call = call;
}

void mpi_leave() {
  if (beat) beat->mpi_call = 0, ++beat->mpi_returned;
}

void start() {
  const char* dir = std::getenv("SP_HEARTBEAT_DIR");
  if (dir && *dir) start(std::string(dir));
}

void start(const std::string& dir) {
  mpi_wrappers_linked();
  if (beat || dir.empty()) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string file = dir + "/rank" + std::to_string(comm::rank()) + ".hb";
  int fd = open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  if (ftruncate(fd, sizeof(Beat)) == 0) {
    void* p = mmap(nullptr, sizeof(Beat), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    // The mapping is shared with the page cache, so what a killed rank wrote is still readable.
    if (p != MAP_FAILED) {
      beat = static_cast<Beat*>(p);
      std::memset(beat, 0, sizeof(Beat));
      beat->rank = comm::rank();
      beat->pid = getpid();
      std::strcpy(beat->phase, "started");
    }
  }
  close(fd);
}

void at(const std::string& technique, const char* phase) {
  if (!beat) return;
  std::strncpy(beat->technique, technique.c_str(), sizeof beat->technique - 1);
  std::strncpy(beat->phase, phase, sizeof beat->phase - 1);
}

void enter() {
  if (beat) ++beat->entered;
}

void leave() {
  if (beat) ++beat->left;
}

std::vector<Beat> read_all(const std::string& dir) {
  std::vector<Beat> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".hb") continue;
    std::ifstream f(e.path(), std::ios::binary);
    Beat b{};
    if (f.read(reinterpret_cast<char*>(&b), sizeof b)) {
      b.technique[sizeof b.technique - 1] = b.phase[sizeof b.phase - 1] = 0;
      out.push_back(b);
    }
  }
  std::sort(out.begin(), out.end(), [](const Beat& a, const Beat& b) { return a.rank < b.rank; });
  return out;
}

std::string diagnose(const std::string& dir, int nranks) {
  // Inside a technique call and not in MPI: the rank that hung or died.
  // Inside a call and in a blocking MPI call: waiting for that rank.
  auto beats = read_all(dir);
  std::string culprit, waiting, outside, silent;
  std::vector<bool> seen(nranks, false);
  auto add = [](std::string& list, const std::string& item) { list += (list.empty() ? "" : "; ") + item; };
  auto add_rank = [](std::string& list, int r) { list += (list.empty() ? "" : ",") + std::to_string(r); };
  for (auto& b : beats) {
    if (b.rank >= 0 && b.rank < nranks) seen[b.rank] = true;
    const std::string where = std::string(b.technique) + " " + b.phase + " (call " + std::to_string(b.entered) + ")";
    const std::string mpi = b.mpi_call > 0 && b.mpi_call <= static_cast<int>(mpi_call_names().size())
                                ? mpi_call_names()[b.mpi_call - 1]
                                : "MPI";
    if (b.entered <= b.left && b.mpi_call > 0)
      add(waiting, "rank " + std::to_string(b.rank) + " waiting in " + mpi + " outside technique calls");
    else if (b.entered <= b.left)
      add_rank(outside, b.rank);
    else if (b.mpi_call > 0)
      add(waiting, "rank " + std::to_string(b.rank) + " waiting in " + mpi + " inside " + where);
    else
      add(culprit, "rank " + std::to_string(b.rank) + " inside " + where + ", not in MPI");
  }
  for (int r = 0; r < nranks; ++r)
    if (!seen[r]) add_rank(silent, r);
  std::string s = culprit.empty() ? (waiting.empty() ? "no rank was inside a technique call"
                                                     : "every rank inside the technique was waiting in MPI")
                                  : "culprit: " + culprit;
  if (!waiting.empty()) s += "; " + waiting;
  if (!outside.empty()) s += "; rank(s) " + outside + " outside technique calls (in the harness)";
  if (!silent.empty()) s += "; rank(s) " + silent + " never started";
  return s;
}

}  // namespace sp::heartbeat
