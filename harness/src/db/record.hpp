#pragma once
// Recording results into the database: a results folder (run, bench, scale,
// qualify) or an nccl-tests JSON file becomes one run with its manifest,
// cases, measurements (every statistic the JSON carries, as key/value rows),
// checks and verdicts, written in one transaction.
#include <cstdint>
#include <string>
#include <vector>

#include "db/db.hpp"

namespace sp::db {

struct Recorded {
  std::int64_t run_id = 0;
  bool already = false;  // the same path was recorded before: nothing written
  std::string kind;
  int cases = 0, measurements = 0, stats = 0, checks = 0, verdicts = 0;
};

// What under `path` can be recorded: the path itself when it is a results
// folder or an nccl-tests JSON file, else the results folders and nccl-tests
// files below it (links are not followed: `latest` would count a run twice).
std::vector<std::string> find_recordable(const std::string& path);

// Records results folders or nccl-tests files, all in one transaction (all
// or none). `kind` "" = from each one's files. Every file is read, and a
// malformed one refused (InputError), before the transaction starts.
std::vector<Recorded> record(Database& d, const std::vector<std::string>& paths, const std::string& kind = "");

// After a command committed its results folder: records it into the
// database `o` names, printing one line. Throws as Database does.
void record_committed(const Options& o, const std::string& path, const std::string& kind);

}  // namespace sp::db
