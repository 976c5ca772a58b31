#pragma once
// Launching child runs for `scaleproof scale` and `qualify`: the rank and
// thread lists, the MPI launcher command, and a watchdog that gives every
// launch a timeout and kills its whole process group when it runs out.
#include <map>
#include <string>
#include <vector>

namespace sp {

// "1,2,4" -> {1,2,4}. Throws InputError for an empty list, a non-integer,
// a count < 1 or a repeated count. `what` names the list in the message.
std::vector<int> parse_counts(const std::string& list, const std::string& what);

// A launcher command with {n} where the rank count goes: "mpiexec -n {n}"
// (default), "srun --mpi=pmi2 -n {n}" inside a Slurm allocation (SLURM_JOB_ID
// set): MPICH joins its ranks into one job only through a PMI server, and
// srun starts one only when asked (its default, MpiDefault=none, gives each
// process a job of its own).
struct Launcher {
  std::vector<std::string> words;                 // split on blanks
  static Launcher from(const std::string& spec);  // "" = default; throws InputError if unusable
  std::vector<std::string> argv(int nranks) const;
  std::string text() const;
  bool local() const;  // mpiexec/mpirun on this node (not srun): oversubscription is predictable
};

struct LaunchResult {
  int exit_code = -1;      // the launcher's exit status (when it exited)
  int signal = 0;          // the signal that ended it (when killed)
  bool timed_out = false;  // the watchdog ended it
  double seconds = 0;
  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
  std::string describe() const;  // "exit 0", "exit 3", "killed by signal 9", "timed out after 5 s"
};

// Runs argv in its own process group with stdout and stderr to `log`,
// `env` added to the environment (and MPI process-manager variables of this
// process removed, so a nested launcher starts a fresh job). After
// `timeout_s` the group gets SIGTERM, then SIGKILL 3 s later. With `echo`,
// what the launch writes to the log is also copied to this process's stdout
// as it arrives.
LaunchResult run_with_watchdog(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                               const std::string& log, double timeout_s, bool echo = false);

// How many processes the launcher says it started in this job: PMI_SIZE
// (MPICH's Hydra, srun --mpi=pmi2), else OMPI_COMM_WORLD_SIZE, else
// SLURM_STEP_NUM_TASKS (any srun step); 0 when not started by a launcher.
// More than one while MPI sees a single rank means the launcher and this MPI
// did not meet: each process is a job of its own.
int launcher_tasks();

// True when an MPI launcher (Hydra, Slurm's srun with PMI, Open MPI, PMIx)
// started this process.
bool under_launcher();

// The last non-empty line of a log ("" if none); with errors_only, the last
// one saying error, fail, abort or terminat(ed/ion), any case.
std::string last_line(const std::string& log, bool errors_only = false);
std::string self_exe();              // this executable, for child runs
std::string process_command_line();  // this process's argv, joined with blanks (for manifests)

}  // namespace sp
