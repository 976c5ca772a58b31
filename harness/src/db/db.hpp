#pragma once
// The results database: one SQLite file (default `<results parent>/scaleproof.sqlite`)
// holding every recorded run. What must hold:
// - the schema carries a version (PRAGMA user_version); opening applies the
//   missing migrations in order, in one transaction; a version newer than
//   this binary knows is refused (InputError), the file left as it is;
// - every write is one IMMEDIATE transaction: a killed process leaves the
//   database as it was before the write, and concurrent writers wait for
//   each other (busy timeout) instead of losing rows;
// - the wait is bounded: past it, the database is reported as locked
//   (InputError, exit 2), nothing written;
// - a file that is not SQLite is refused (InputError) and left untouched.
#include <CLI/CLI.hpp>
#include <SQLiteCpp/SQLiteCpp.h>

#include <functional>
#include <memory>
#include <string>

namespace sp::db {

// The schema version this binary writes (the number of migrations).
int schema_version();

// The default database of a results parent folder: <parent>/scaleproof.sqlite.
std::string default_path(const std::string& results_parent);

struct Options {
  std::string path;       // the database file; "" = the default of the results parent; "none" = do not record
  double timeout_s = 30;  // the longest wait for another writer
  bool enabled() const { return path != "none"; }
  // This database for results written under `results_parent`.
  Options under(const std::string& results_parent) const {
    return {path.empty() ? default_path(results_parent) : path, timeout_s};
  }
};

// --db and --db-timeout on a subcommand.
void add_options(CLI::App* c, Options& o);

class Database {
 public:
  // Opens (creating when `create`) and migrates. Throws InputError for a
  // file that is not SQLite, a newer schema, a lock held past the timeout,
  // or a missing file when !create.
  Database(const Options& o, bool create);
  SQLite::Database& sql() { return *db_; }
  const std::string& path() const { return path_; }
  // Runs `work` inside one IMMEDIATE transaction, committed when it returns.
  void write(const std::function<void(SQLite::Database&)>& work);
  // Runs `work` and maps SQLite errors to InputError / runtime_error.
  template <class F>
  auto read(F&& work) -> decltype(work(std::declval<SQLite::Database&>())) {
    try {
      return work(*db_);
    } catch (const SQLite::Exception& e) {
      rethrow(e);
      throw;
    }
  }

 private:
  [[noreturn]] void rethrow(const SQLite::Exception& e) const;
  std::string path_;
  double timeout_s_;
  std::unique_ptr<SQLite::Database> db_;
};

// Checks, before any work starts, that `o` names a database this run can
// record into: an existing file must be SQLite at a known schema version,
// a missing one must be creatable. Writes nothing.
void check_usable(const Options& o);
// The same, checked on rank 0 (the rank that records) and thrown on every
// rank, so that no rank goes on into a collective call alone.
void check_usable_on_ranks(const Options& o);

}  // namespace sp::db
