#include "db/schema.hpp"

namespace sp::db {

const std::vector<std::string>& migrations() {
  // Measurements are stored generically: one row per measurement (a
  // repetition, an aggregate, a sweep point, a message size) and its
  // statistics as key/value rows, so that a field a results file gains
  // lands without a schema change.
  static const std::vector<std::string> m = {
      // 0 -> 1: runs, their manifests, cases, measurements, checks, verdicts.
      R"(
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,      -- the results folder (or file), absolute
  name TEXT NOT NULL,
  kind TEXT NOT NULL,             -- run | bench | scale | qualify | nccl-tests
  machine TEXT NOT NULL,          -- the manifest's host name
  git_commit TEXT NOT NULL,
  date TEXT NOT NULL,             -- the manifest's UTC date, ISO 8601
  ranks INTEGER NOT NULL,
  partial INTEGER NOT NULL,       -- 1 when a watchdog cut the run short
  recorded_at TEXT NOT NULL);
CREATE TABLE manifest(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY(run_id, key));
CREATE TABLE cases(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  family TEXT NOT NULL, technique TEXT NOT NULL, variant TEXT NOT NULL, params TEXT NOT NULL,
  UNIQUE(run_id, technique, variant, params));
CREATE TABLE measurements(
  id INTEGER PRIMARY KEY,
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  source TEXT NOT NULL,           -- bench | sweep | nccl-tests
  label TEXT NOT NULL);           -- rep<i> | median | mean | ... | ranks=<n> | the point
CREATE TABLE stats(
  measurement_id INTEGER NOT NULL REFERENCES measurements(id) ON DELETE CASCADE,
  key TEXT NOT NULL, value REAL, text TEXT,
  PRIMARY KEY(measurement_id, key));
CREATE TABLE checks(
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  passed INTEGER NOT NULL, detail TEXT NOT NULL);
CREATE TABLE verdicts(
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  quantity TEXT NOT NULL, status TEXT NOT NULL,
  predicted REAL, measured REAL, ratio REAL, band_lo REAL, band_hi REAL,
  unit TEXT NOT NULL, note TEXT NOT NULL);
)",
      // 1 -> 2: the lookups history makes (one case over many runs, one machine over time).
      R"(
CREATE INDEX cases_by_key ON cases(technique, variant, params);
CREATE INDEX runs_by_machine ON runs(machine, date);
CREATE INDEX measurements_by_case ON measurements(case_id);
)",
  };
  return m;
}

}  // namespace sp::db
