#pragma once
// Writing one run's rows inside the caller's transaction: the run and its
// manifest, its cases (each once), measurements with their statistics as
// key/value rows, checks and verdicts. Counts what it wrote into Recorded.
#include <SQLiteCpp/SQLiteCpp.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "db/record.hpp"

namespace sp::db {

using json = nlohmann::json;

struct Stat {
  bool number = true;
  double value = NAN;  // NaN is stored as NULL
  std::string text;
};
using Stats = std::map<std::string, Stat>;

// Every scalar of a JSON value under a dotted key (arrays as key[i]), so that
// per-rank and per-iteration arrays land as rows like any other statistic.
void flatten(const json& j, const std::string& key, Stats& out);
// A JSON value as text: a string as it is, anything else as JSON.
std::string text_of(const json& j);
std::string now_utc();  // ISO 8601, to the second

class Writer {
 public:
  Writer(SQLite::Database& db, Recorded& r) : db_(db), r_(r) {}
  // The run's row (machine, commit, date and ranks from the manifest) and its manifest rows; first.
  void run(const std::string& path, const std::string& name, const std::string& kind, const json& manifest,
           const std::string& fallback_date, bool partial);
  // The run's case, inserted at its first mention (a verdict names no family; a later row may).
  std::int64_t case_id(const std::string& family, const std::string& technique, const std::string& variant,
                       const std::string& params);
  // One measurement and every statistic of it (NaN as NULL).
  void measurement(std::int64_t case_id, const std::string& source, const std::string& label, const Stats& stats);
  void check(std::int64_t case_id, bool passed, const json& row);
  void verdict(std::int64_t case_id, const json& v);

 private:
  SQLite::Database& db_;
  Recorded& r_;
  std::int64_t run_ = 0;
  std::map<std::string, std::int64_t> cases_;
};

}  // namespace sp::db
