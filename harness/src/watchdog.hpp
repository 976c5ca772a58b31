#pragma once
// The watchdog of every command that runs techniques on ranks (check, bench,
// run, nccl-tests, pipeline), launched by a parent or by hand under mpiexec.
// Every rank records heartbeats (heartbeat.hpp) in one job folder, created by
// rank 0 under /dev/shm (else TMPDIR, else /tmp) and broadcast to the others,
// or the folder a parent `scale`/`qualify` names in SP_HEARTBEAT_DIR. A
// thread on rank 0 watches the heartbeats of the ranks on its node; when none
// of them changes (no technique call entered or left, no blocking MPI call
// returned) for --timeout seconds, it keeps what was written so far marked
// partial, prints the per-rank diagnosis as one line on stderr
// (`scaleproof: watchdog: ...`) and aborts the job with exit code 3.
#include <functional>
#include <string>

namespace CLI {
class App;
}

namespace sp::watchdog {

// Seconds without progress before the watchdog fires, for a subcommand whose
// --size option (if any) selected `largest_size` ("" = none given): generous,
// since it bounds one technique call, not the whole run.
double default_timeout(const std::string& largest_size);

// Adds --timeout SECONDS to a subcommand that runs techniques on ranks.
void add_option(CLI::App* sub);

// Collective, after parsing: when a subcommand given add_option() was
// parsed, starts the heartbeats and rank 0's watchdog thread.
void start(const CLI::App& app);
// Collective: ends the watchdog thread and removes the job folder.
void stop();

// While one of these lives, a watchdog that fires first calls `keep` with
// the diagnosis; keep marks the results written so far as partial, makes
// them visible and returns where they are.
class KeepPartial {
 public:
  explicit KeepPartial(std::function<std::string(const std::string& diagnosis)> keep);
  ~KeepPartial();
  KeepPartial(const KeepPartial&) = delete;
  KeepPartial& operator=(const KeepPartial&) = delete;
};

}  // namespace sp::watchdog
