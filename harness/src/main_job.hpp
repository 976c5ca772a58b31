#pragma once
// The main job's launch of its multi-rank techniques: which techniques go,
// at how many ranks, through which launcher, under a watchdog; and the merge
// of what the launch wrote into the main job's results folder.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "launch.hpp"
#include "run_job.hpp"

namespace sp {

// Ranks for the multi-rank techniques when --ranks is not given: the largest
// power of two that fits the cores (power-of-two rank rules then accept it),
// at least 2 on a machine with 2 or more cores.
int default_launch_ranks(int cores);

struct LaunchPlan {
  int ranks = 0;    // 0 = nothing launched
  int threads = 1;  // per launched rank
  Launcher launcher;
  std::vector<std::string> techniques;               // launched at `ranks`
  std::vector<Case> cases;                           // validated at `ranks`, for counting and the timeout
  nlohmann::json skipped = nlohmann::json::array();  // [{technique, reason}]
  double timeout_s = 0;                              // the launch's wall-clock limit, scaled to its cases
};

// Validates everything about the launch before anything is written: the
// rank count, the launcher (installed, and able to start that many ranks),
// and every multi-rank technique the filters select. Throws InputError.
LaunchPlan plan_launch(const RunOptions& o, const Filter& f, int cores);

// Runs the launch into `dir`/launches under the watchdog and returns its
// record for job.json: command, result, wall time, the part's manifest, and
// on failure the watchdog's diagnosis. On success the part's check rows and
// benchmarks are appended to `check_rows` and `bench`.
nlohmann::json run_launch(const LaunchPlan& plan, const RunOptions& o, const std::string& dir,
                          nlohmann::json& check_rows, nlohmann::json& bench);

}  // namespace sp
