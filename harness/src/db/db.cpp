#include "db/db.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "db/schema.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/option_range.hpp"
#include "scaleproof/params.hpp"

namespace fs = std::filesystem;

namespace sp::db {

namespace {

int busy_ms(double timeout_s) { return static_cast<int>(std::lround(timeout_s * 1000)); }

int user_version(SQLite::Database& d) { return d.execAndGet("PRAGMA user_version").getInt(); }

std::string timeout_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// The one mapping of SQLite's failures to what the user is told.
[[noreturn]] void fail(const std::string& path, double timeout_s, const SQLite::Exception& e) {
  const int code = e.getErrorCode();
  if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) throw InputError("--db " + path + ": not a SQLite database");
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
    throw InputError("--db " + path + ": locked by another process for more than " + timeout_text(timeout_s) +
                     " s (--db-timeout)");
  if (code == SQLITE_CANTOPEN || code == SQLITE_READONLY || code == SQLITE_PERM)
    throw InputError("--db " + path + ": cannot open (" + e.what() + ")");
  throw std::runtime_error("database " + path + ": " + e.what());
}

}  // namespace

int schema_version() { return static_cast<int>(migrations().size()); }

std::string default_path(const std::string& results_parent) {
  return (fs::path(results_parent.empty() ? "." : results_parent) / "scaleproof.sqlite").string();
}

void add_options(CLI::App* c, Options& o) {
  c->add_option("--db", o.path,
                "Results database (SQLite; default: <results parent>/scaleproof.sqlite; none: do not record)");
  cli::range(c->add_option("--db-timeout", o.timeout_s, "Seconds to wait for another process writing the database"), 0,
             3600)
      ->capture_default_str();
}

void Database::rethrow(const SQLite::Exception& e) const { fail(path_, timeout_s_, e); }

Database::Database(const Options& o, bool create) : path_(o.path), timeout_s_(o.timeout_s) {
  std::error_code ec;
  if (fs::is_directory(path_, ec)) throw InputError("--db " + path_ + ": is a folder");
  if (!create && !fs::exists(path_, ec)) throw InputError("--db " + path_ + ": no such database");
  try {
    const int flags = create ? SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE : SQLite::OPEN_READWRITE;
    db_ = std::make_unique<SQLite::Database>(path_, flags, busy_ms(timeout_s_));
    db_->exec("PRAGMA foreign_keys = ON");
    const int have = user_version(*db_);  // reads the header: a file that is not SQLite fails here
    if (have > schema_version())
      throw InputError("--db " + path_ + ": schema version " + std::to_string(have) +
                       " is newer than this scaleproof knows (" + std::to_string(schema_version()) + ")");
    if (have < schema_version()) {
      SQLite::Transaction t(*db_, SQLite::TransactionBehavior::IMMEDIATE);
      // Another process may have migrated while this one waited for the lock.
      for (int v = user_version(*db_); v < schema_version(); ++v) {
        db_->exec(migrations()[v]);
        db_->exec("PRAGMA user_version = " + std::to_string(v + 1));
      }
      t.commit();
    }
  } catch (const SQLite::Exception& e) {
    rethrow(e);
  }
}

void Database::write(const std::function<void(SQLite::Database&)>& work) {
  try {
    SQLite::Transaction t(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    work(*db_);
    t.commit();
  } catch (const SQLite::Exception& e) {
    rethrow(e);
  }
}

void check_usable(const Options& o) {
  if (!o.enabled()) return;
  if (o.path.empty()) throw InputError("--db: empty file name");
  std::error_code ec;
  const fs::path p(o.path);
  if (fs::is_directory(p, ec)) throw InputError("--db " + o.path + ": is a folder");
  if (!fs::exists(p, ec)) {
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    // The results parent is created by the run itself; its nearest existing ancestor must be writable.
    fs::path probe = dir;
    while (!probe.empty() && !fs::exists(probe, ec)) probe = probe.parent_path();
    if (probe.empty()) probe = ".";
    if (!fs::is_directory(probe, ec) || access(probe.c_str(), W_OK) != 0)
      throw InputError("--db " + o.path + ": folder " + dir.string() + " cannot be written");
    return;
  }
  try {
    SQLite::Database d(o.path, SQLite::OPEN_READONLY, busy_ms(o.timeout_s));
    const int have = user_version(d);
    if (have > schema_version())
      throw InputError("--db " + o.path + ": schema version " + std::to_string(have) +
                       " is newer than this scaleproof knows (" + std::to_string(schema_version()) + ")");
  } catch (const SQLite::Exception& e) {
    fail(o.path, o.timeout_s, e);
  }
  if (access(o.path.c_str(), W_OK) != 0) throw InputError("--db " + o.path + ": not writable");
}

}  // namespace sp::db

namespace sp::db {

void check_usable_on_ranks(const Options& o) {
  std::string error;
  if (comm::rank() == 0) {
    try {
      check_usable(o);
    } catch (const InputError& e) {
      error = e.what();
    }
  }
  if (!comm::all(error.empty())) throw InputError(comm::rank() == 0 ? error : "--db: refused on rank 0");
}

}  // namespace sp::db
