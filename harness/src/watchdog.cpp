#include "watchdog.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "heartbeat.hpp"
#include "temp_cleanup.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/option_range.hpp"
#include "scaleproof/params.hpp"

namespace fs = std::filesystem;

namespace sp::watchdog {

namespace {

// --timeout of each subcommand that has one: < 0 until given.
std::map<const CLI::App*, std::shared_ptr<double>>& options() {
  static std::map<const CLI::App*, std::shared_ptr<double>> m;
  return m;
}

struct Job {
  std::string dir;     // the heartbeat folder
  bool owned = false;  // created here (removed at stop), not the parent's
  double timeout_s = 0;
  int nranks = 1;
  std::thread thread;
  // stop() wakes the watcher at once: a poll that slept on would hold every
  // command's exit for up to one poll period.
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
};
Job job;

std::mutex keep_mutex;
std::function<std::string(const std::string&)> keep_fn;

// What changes when any rank makes progress: technique calls entered and
// left, blocking MPI calls returned, the technique and phase.
using Signature = std::vector<std::tuple<int, uint64_t, uint64_t, uint64_t, std::string>>;
Signature signature(const std::string& dir) {
  Signature s;
  for (auto& b : heartbeat::read_all(dir))
    s.emplace_back(b.rank, b.entered, b.left, b.mpi_returned, std::string(b.technique) + "/" + b.phase);
  return s;
}

std::string job_folder() {
  const char* tmpdir = std::getenv("TMPDIR");
  for (const char* base : {static_cast<const char*>("/dev/shm"), tmpdir, static_cast<const char*>("/tmp")}) {
    if (!base || !*base || access(base, W_OK) != 0) continue;
    temp_cleanup::remove_stale(base, "scaleproof-hb-");  // left by a job killed with SIGKILL
    std::string tmpl = std::string(base) + "/" + temp_cleanup::owned_prefix("scaleproof-hb-") + "XXXXXX";
    if (mkdtemp(tmpl.data())) {
      temp_cleanup::track(tmpl);  // removed if SIGINT or SIGTERM ends the job
      return tmpl;
    }
  }
  return "";
}

[[noreturn]] void fire() {
  char head[160];
  std::snprintf(head, sizeof head, "no progress on any rank for %.0f s (--timeout %g): ", job.timeout_s, job.timeout_s);
  const std::string diagnosis = head + heartbeat::diagnose(job.dir, job.nranks);
  std::string kept;
  {
    std::lock_guard<std::mutex> lock(keep_mutex);
    if (keep_fn) {
      try {
        kept = keep_fn(diagnosis);
      } catch (const std::exception& e) {
        kept = std::string("(not kept: ") + e.what() + ")";
      }
    }
  }
  std::string line = "scaleproof: watchdog: " + diagnosis;
  if (!kept.empty()) line += "; partial results: " + kept;
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stdout), std::fflush(stderr);
  // MPI_Abort ends every process of the job at once, the launcher's output
  // forwarders included: bytes written just before it can be lost on their
  // way to the launcher's stderr. The pause lets them drain the line.
  if (job.nranks > 1) std::this_thread::sleep_for(std::chrono::seconds(1));
  if (job.owned) {
    std::error_code ec;
    fs::remove_all(job.dir, ec);
  }
  comm::abort(3);
}

void watch() {
  using clock = std::chrono::steady_clock;
  Signature last = signature(job.dir);
  auto changed_at = clock::now();
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(job.mutex);
      if (job.wake.wait_for(lock, std::chrono::milliseconds(100), [] { return job.stopping; })) return;
    }
    Signature now = signature(job.dir);
    if (now != last) {
      last = std::move(now);
      changed_at = clock::now();
    } else if (std::chrono::duration<double>(clock::now() - changed_at).count() > job.timeout_s) {
      fire();
    }
  }
}

// The job folder's name, from rank 0 to every rank.
std::string broadcast(std::string s) {
#ifdef SP_HAVE_MPI
  if (comm::size() > 1) {
    int n = static_cast<int>(s.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, comm::world());
    s.resize(n);
    MPI_Bcast(s.data(), n, MPI_CHAR, 0, comm::world());
  }
#endif
  return s;
}

}  // namespace

double default_timeout(const std::string& largest_size) {
  if (largest_size == "large") return 3600;
  if (largest_size == "medium") return 1200;
  return 600;
}

void add_option(CLI::App* sub) {
  auto value = std::make_shared<double>(-1);
  options()[sub] = value;
  cli::positive(
      sub->add_option("--timeout", *value,
                      "Watchdog: seconds without progress on any rank before the job is ended with a per-rank "
                      "diagnosis (default: 600; 1200 for --size medium, 3600 for large)"),
      1e6);
}

void start(const CLI::App& app) {
  const CLI::App* sub = nullptr;
  for (auto* s : app.get_subcommands())
    if (options().count(s)) sub = s;
  if (!sub) return;
  double timeout = *options()[sub];
  if (sub->count("--timeout")) {
    if (!(timeout > 0) || !std::isfinite(timeout))
      throw InputError("--timeout must be a number of seconds > 0 (got " +
                       sub->get_option("--timeout")->as<std::string>() + ")");
  } else {
    std::string largest;
    if (auto* size = sub->get_option_no_throw("--size"))
      for (auto& s : size->results())
        if (s == "large" || (s == "medium" && largest != "large") || largest.empty()) largest = s;
    timeout = default_timeout(largest);
  }
  const char* parent = std::getenv("SP_HEARTBEAT_DIR");
  job.owned = !(parent && *parent);
  std::string dir = job.owned ? (comm::rank() == 0 ? job_folder() : "") : parent;
  if (job.owned) dir = broadcast(dir);
  if (dir.empty()) {
    if (comm::rank() == 0) std::fprintf(stderr, "warning: watchdog off: no writable folder for heartbeats\n");
    return;
  }
  job.dir = dir;
  job.timeout_s = timeout;
  job.nranks = comm::size();
  heartbeat::start(dir);
  comm::barrier();  // every rank's file exists before rank 0 watches (or removes) the folder
  job.stopping = false;
  if (comm::rank() == 0) job.thread = std::thread(watch);
}

void stop() {
  if (job.dir.empty()) return;
  {
    std::lock_guard<std::mutex> lock(job.mutex);
    job.stopping = true;
  }
  job.wake.notify_all();
  if (job.thread.joinable()) job.thread.join();
  if (job.owned && comm::rank() == 0) {
    std::error_code ec;
    fs::remove_all(job.dir, ec);
    temp_cleanup::untrack(job.dir);
  }
  job.dir.clear();
}

KeepPartial::KeepPartial(std::function<std::string(const std::string&)> keep) {
  std::lock_guard<std::mutex> lock(keep_mutex);
  keep_fn = std::move(keep);
}

KeepPartial::~KeepPartial() {
  std::lock_guard<std::mutex> lock(keep_mutex);
  keep_fn = nullptr;
}

}  // namespace sp::watchdog
