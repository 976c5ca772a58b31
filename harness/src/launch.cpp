#include "launch.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "scaleproof/params.hpp"

extern char** environ;

namespace sp {

std::vector<int> parse_counts(const std::string& list, const std::string& what) {
  std::vector<int> out;
  std::stringstream ss(list);
  std::string item;
  if (list.empty()) throw InputError("empty " + what + " list");
  while (std::getline(ss, item, ',')) {
    size_t pos = 0;
    int v = 0;
    try {
      v = std::stoi(item, &pos);
    } catch (...) {
      pos = 0;
    }
    if (item.empty() || pos != item.size())
      throw InputError("bad " + what + " list '" + list + "': '" + item + "' is not an integer");
    if (v < 1) throw InputError("bad " + what + " list '" + list + "': counts must be >= 1");
    if (std::count(out.begin(), out.end(), v))
      throw InputError("bad " + what + " list '" + list + "': " + item + " repeated");
    out.push_back(v);
  }
  if (list.back() == ',') throw InputError("bad " + what + " list '" + list + "': trailing comma");
  return out;
}

static bool executable_on_path(const std::string& prog) {
  namespace fs = std::filesystem;
  if (prog.find('/') != std::string::npos) return access(prog.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "");
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && access((fs::path(dir) / prog).c_str(), X_OK) == 0) return true;
  return false;
}

Launcher Launcher::from(const std::string& spec) {
  std::string s = spec;
  if (s.empty()) s = std::getenv("SLURM_JOB_ID") ? "srun --mpi=pmi2 -n {n}" : "mpiexec -n {n}";
  Launcher l;
  std::stringstream ss(s);
  std::string w;
  while (ss >> w) l.words.push_back(w);
  if (l.words.empty()) throw InputError("empty launcher command");
  bool has_n = false;
  for (auto& x : l.words) has_n = has_n || x.find("{n}") != std::string::npos;
  if (!has_n) throw InputError("launcher '" + s + "' has no {n} where the rank count goes");
  if (!executable_on_path(l.words[0])) throw InputError("unknown launcher '" + l.words[0] + "': not found on PATH");
  return l;
}

std::vector<std::string> Launcher::argv(int nranks) const {
  std::vector<std::string> out;
  for (auto w : words) {
    for (size_t p; (p = w.find("{n}")) != std::string::npos;) w.replace(p, 3, std::to_string(nranks));
    out.push_back(w);
  }
  return out;
}

std::string Launcher::text() const {
  std::string s;
  for (auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

bool Launcher::local() const {
  const std::string prog = std::filesystem::path(words[0]).filename();
  return prog.rfind("mpiexec", 0) == 0 || prog.rfind("mpirun", 0) == 0;
}

std::string LaunchResult::describe() const {
  char buf[96];
  if (timed_out)
    std::snprintf(buf, sizeof buf, "timed out after %.0f s", seconds);
  else if (signal)
    std::snprintf(buf, sizeof buf, "killed by signal %d (%s)", signal, strsignal(signal));
  else
    std::snprintf(buf, sizeof buf, "exit %d", exit_code);
  return buf;
}

// Variables through which MPICH/Hydra, PMIx or Slurm tie a process to its job.
static bool job_variable(const std::string& name) {
  for (const char* p : {"PMI_", "PMIX_", "HYDI_", "HYDRA_", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "OMPI_"})
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

// The child runs in its own process group, so a Ctrl-C at the terminal
// reaches only this process: pass it on to the whole launch, then die of it.
// The previous handlers (e.g. the results folder's cleanup) run after.
static volatile sig_atomic_t g_child_group = 0;
static sighandler_t g_prev_int = SIG_DFL, g_prev_term = SIG_DFL;

static void forward_and_die(int sig) {
  if (g_child_group > 0) kill(-g_child_group, SIGKILL);
  signal(sig, sig == SIGINT ? g_prev_int : g_prev_term);
  raise(sig);
}

LaunchResult run_with_watchdog(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                               const std::string& log, double timeout_s, bool echo) {
  using clock = std::chrono::steady_clock;
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e, key = kv.substr(0, kv.find('='));
    if (!job_variable(key) && !env.count(key)) envs.push_back(kv);
  }
  for (auto& [k, v] : env) envs.push_back(k + "=" + v);
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  for (auto& e : envs) cenv.push_back(const_cast<char*>(e.c_str()));
  cargv.push_back(nullptr), cenv.push_back(nullptr);
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + log);

  const auto t0 = clock::now();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    setpgid(0, 0);  // own group: the watchdog kills the launcher and every rank it started
    dup2(fd, 1), dup2(fd, 2);
    close(fd);
    execvpe(cargv[0], cargv.data(), cenv.data());
    std::fprintf(stderr, "cannot execute %s: %s\n", cargv[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);  // also here: no race with the child's own call
  close(fd);
  g_child_group = pid;
  g_prev_int = signal(SIGINT, forward_and_die), g_prev_term = signal(SIGTERM, forward_and_die);
  auto old_int = g_prev_int, old_term = g_prev_term;

  LaunchResult r;
  int status = 0;
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
  const int echo_fd = echo ? open(log.c_str(), O_RDONLY) : -1;
  auto copy_new_output = [&] {
    char buf[4096];
    for (ssize_t n; echo_fd >= 0 && (n = read(echo_fd, buf, sizeof buf)) > 0;)
      std::fwrite(buf, 1, static_cast<size_t>(n), stdout);
    std::fflush(stdout);
  };
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    copy_new_output();
    if (w == pid) break;
    if (elapsed() > timeout_s) {
      r.timed_out = true;
      kill(-pid, SIGTERM);
      for (int i = 0; i < 60 && waitpid(pid, &status, WNOHANG) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(-pid, SIGKILL);  // whatever the launcher left behind in its group
  copy_new_output();
  if (echo_fd >= 0) close(echo_fd);
  signal(SIGINT, old_int), signal(SIGTERM, old_term);
  g_child_group = 0;
  r.seconds = elapsed();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  if (r.timed_out) r.signal = 0;
  return r;
}

bool under_launcher() {
  for (const char* v : {"PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

int launcher_tasks() {
  for (const char* v : {"PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS"})
    if (const char* s = std::getenv(v)) return std::atoi(s);
  return 0;
}

std::string last_line(const std::string& log, bool errors_only) {
  std::ifstream f(log);
  std::string last;
  for (std::string line; std::getline(f, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string lower = line;
    for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    bool says = false;
    for (const char* w : {"error", "fail", "abort", "terminat"}) says = says || lower.find(w) != std::string::npos;
    if (!errors_only || says) last = line;
  }
  return last;
}

std::string process_command_line() {
  std::ifstream f("/proc/self/cmdline");
  std::string s, arg;
  while (std::getline(f, arg, '\0')) s += (s.empty() ? "" : " ") + arg;
  return s;
}

std::string self_exe() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

}  // namespace sp
