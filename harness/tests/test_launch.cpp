// Rank/thread lists, launcher commands, the watchdog and the heartbeat
// diagnosis, without MPI (plain shell commands stand in for launches).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "heartbeat.hpp"
#include "launch.hpp"
#include "scaleproof/params.hpp"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path p = fs::temp_directory_path() / ("sp-launch-test-" + std::to_string(getpid()));
  TempDir() { fs::create_directories(p); }
  ~TempDir() { fs::remove_all(p); }
};

bool process_gone(pid_t pid) {
  // Gone, or a zombie left for a parent that does not reap (containers).
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_s, comm, state;
  if (!(stat >> pid_s >> comm >> state)) return true;
  return state == "Z" || state == "X";
}

}  // namespace

TEST(Launch, ParsesCountLists) {
  EXPECT_EQ(sp::parse_counts("1,2,4", "rank"), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(sp::parse_counts("3", "rank"), (std::vector<int>{3}));
  for (const char* bad : {"", "0,2", "a", "1,,2", "2,2", "1,", "-1", "1.5", "2x", "1;2"})
    EXPECT_THROW(sp::parse_counts(bad, "rank"), sp::InputError) << "'" << bad << "'";
}

TEST(Launch, LauncherCommands) {
  auto l = sp::Launcher::from("sh -c {n}");
  EXPECT_EQ(l.argv(3), (std::vector<std::string>{"sh", "-c", "3"}));
  EXPECT_FALSE(l.local());
  EXPECT_THROW(sp::Launcher::from("nosuch-launcher-xyz -n {n}"), sp::InputError);
  EXPECT_THROW(sp::Launcher::from("sh -n 4"), sp::InputError);  // no {n}
  EXPECT_THROW(sp::Launcher::from("   "), sp::InputError);
  unsetenv("SLURM_JOB_ID");
  EXPECT_EQ(sp::Launcher::from("").words[0], "mpiexec");  // outside Slurm
  // Inside a Slurm allocation the default is srun (an input error here, where srun is not installed).
  setenv("SLURM_JOB_ID", "1", 1);
  const char* path = std::getenv("PATH");
  const std::string saved = path ? path : "";
  setenv("PATH", "/nonexistent", 1);
  try {
    sp::Launcher::from("");
    ADD_FAILURE() << "srun found on an empty PATH";
  } catch (const sp::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'srun'"), std::string::npos) << e.what();
  }
  // With srun installed, the default asks it for a PMI-2 server: MPICH's ranks meet only through one.
  TempDir d;
  std::ofstream(d.p / "srun") << "#!/bin/sh\n";
  fs::permissions(d.p / "srun", fs::perms::owner_all);
  setenv("PATH", d.p.c_str(), 1);
  EXPECT_EQ(sp::Launcher::from("").text(), "srun --mpi=pmi2 -n {n}");
  setenv("PATH", saved.c_str(), 1);
  unsetenv("SLURM_JOB_ID");
}

TEST(Launch, TasksTheLauncherStarted) {
  const char* names[] = {"PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS"};
  for (const char* v : names) unsetenv(v);
  EXPECT_EQ(sp::launcher_tasks(), 0);  // not under a launcher
  setenv("SLURM_STEP_NUM_TASKS", "4", 1);
  EXPECT_EQ(sp::launcher_tasks(), 4);  // plain srun: no PMI, only Slurm's count
  setenv("PMI_SIZE", "2", 1);
  EXPECT_EQ(sp::launcher_tasks(), 2);  // a PMI server's count wins (e.g. mpiexec inside a 4-task step)
  for (const char* v : names) unsetenv(v);
}

TEST(Launch, WatchdogReportsExitCodes) {
  TempDir d;
  auto r = sp::run_with_watchdog({"sh", "-c", "echo hello; exit 3"}, {}, (d.p / "log").string(), 10);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe(), "exit 3");
  std::ifstream log(d.p / "log");
  std::string line;
  std::getline(log, line);
  EXPECT_EQ(line, "hello");
  EXPECT_TRUE(sp::run_with_watchdog({"sh", "-c", "exit 0"}, {}, (d.p / "log").string(), 10).ok());
  auto k = sp::run_with_watchdog({"sh", "-c", "kill -9 $$"}, {}, (d.p / "log").string(), 10);
  EXPECT_EQ(k.signal, 9);
  EXPECT_EQ(sp::run_with_watchdog({"/nonexistent/prog"}, {}, (d.p / "log").string(), 10).exit_code, 127);
}

TEST(Launch, WatchdogKillsTheWholeGroupOnTimeout) {
  TempDir d;
  const auto pidfile = d.p / "pid";
  const auto t0 = std::chrono::steady_clock::now();
  auto r = sp::run_with_watchdog({"sh", "-c", "sleep 60 & echo $! > " + pidfile.string() + "; wait"}, {},
                                 (d.p / "log").string(), 1.0);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(took, 10);
  pid_t grandchild = 0;
  std::ifstream(pidfile) >> grandchild;
  ASSERT_GT(grandchild, 0);
  for (int i = 0; i < 50 && !process_gone(grandchild); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(process_gone(grandchild)) << "the launch's own child survived the watchdog";
}

TEST(Launch, LastLineOfALog) {
  TempDir d;
  std::ofstream(d.p / "log") << "start\nscaleproof: error: bad thing\nmore output\n\n";
  EXPECT_EQ(sp::last_line((d.p / "log").string()), "more output");
  EXPECT_EQ(sp::last_line((d.p / "log").string(), true), "scaleproof: error: bad thing");
  EXPECT_EQ(sp::last_line((d.p / "none").string()), "");
}

TEST(Launch, ChildEnvironment) {
  TempDir d;
  setenv("PMI_RANK", "5", 1);  // a launcher variable of this process must not leak into a new job
  auto r = sp::run_with_watchdog({"sh", "-c", "test \"$FOO\" = bar && test -z \"$PMI_RANK\""}, {{"FOO", "bar"}},
                                 (d.p / "log").string(), 10);
  unsetenv("PMI_RANK");
  EXPECT_TRUE(r.ok()) << r.describe();
}

TEST(Heartbeat, NamesTheRankInsideACall) {
  TempDir d;
  auto write = [&](int rank, const char* tech, const char* phase, uint64_t entered, uint64_t left,
                   const char* mpi = "") {
    sp::heartbeat::Beat b{};
    const auto& names = sp::heartbeat::mpi_call_names();
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == mpi) b.mpi_call = static_cast<int32_t>(i + 1);
    std::strncpy(b.technique, tech, sizeof b.technique - 1);
    std::strncpy(b.phase, phase, sizeof b.phase - 1);
    b.entered = entered, b.left = left, b.rank = rank;
    std::ofstream(d.p / ("rank" + std::to_string(rank) + ".hb"), std::ios::binary)
        .write(reinterpret_cast<const char*>(&b), sizeof b);
  };
  write(0, "hang", "run", 4, 3, "MPI_Allreduce");
  write(1, "hang", "run", 4, 3);
  write(2, "hang", "setup", 1, 1);
  const std::string s = sp::heartbeat::diagnose(d.p.string(), 5);
  EXPECT_NE(s.find("culprit: rank 1 inside hang run (call 4), not in MPI"), std::string::npos) << s;
  EXPECT_NE(s.find("rank 0 waiting in MPI_Allreduce inside hang run"), std::string::npos) << s;
  EXPECT_NE(s.find("rank(s) 2 outside"), std::string::npos) << s;
  EXPECT_NE(s.find("rank(s) 3,4 never started"), std::string::npos) << s;
  EXPECT_EQ(s.find("culprit: rank 0"), std::string::npos) << s;
}
