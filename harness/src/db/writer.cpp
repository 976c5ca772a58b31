#include "db/writer.hpp"

#include <ctime>

namespace sp::db {

void flatten(const json& j, const std::string& key, Stats& out) {
  if (j.is_object()) {
    for (auto& [k, v] : j.items()) flatten(v, key.empty() ? k : key + "." + k, out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) flatten(j[i], key + "[" + std::to_string(i) + "]", out);
  } else if (j.is_boolean()) {
    out[key] = {true, j.get<bool>() ? 1.0 : 0.0, ""};
  } else if (j.is_number()) {
    out[key] = {true, j.get<double>(), ""};
  } else if (j.is_string()) {
    out[key] = {false, NAN, j.get<std::string>()};
  } else {
    out[key] = {};
  }
}

std::string text_of(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

void Writer::run(const std::string& path, const std::string& name, const std::string& kind, const json& manifest,
                 const std::string& fallback_date, bool partial) {
  auto str = [&](const char* k, const std::string& dflt) { return manifest.contains(k) ? text_of(manifest[k]) : dflt; };
  SQLite::Statement q(db_,
                      "INSERT INTO runs(path, name, kind, machine, git_commit, date, ranks, partial, recorded_at) "
                      "VALUES(?,?,?,?,?,?,?,?,?)");
  q.bind(1, path);
  q.bind(2, name);
  q.bind(3, kind);
  q.bind(4, str("hostname", "unknown"));
  q.bind(5, str("git_commit", "unknown"));
  q.bind(6, str("date", fallback_date));
  q.bind(7, manifest.contains("ranks") && manifest["ranks"].is_number() ? manifest["ranks"].get<int>() : 1);
  q.bind(8, partial ? 1 : 0);
  q.bind(9, now_utc());
  q.exec();
  run_ = db_.getLastInsertRowid();
  r_.run_id = run_;
  SQLite::Statement m(db_, "INSERT OR REPLACE INTO manifest(run_id, key, value) VALUES(?,?,?)");
  if (manifest.is_object())
    for (auto& [k, v] : manifest.items()) {
      m.bind(1, run_);
      m.bind(2, k);
      m.bind(3, text_of(v));
      m.exec();
      m.reset();
    }
}

std::int64_t Writer::case_id(const std::string& family, const std::string& technique, const std::string& variant,
                             const std::string& params) {
  const std::string key = technique + "\x1f" + variant + "\x1f" + params;
  if (auto it = cases_.find(key); it != cases_.end()) {
    if (!family.empty()) {  // verdicts name no family; a later bench or check row does
      SQLite::Statement u(db_, "UPDATE cases SET family = ? WHERE id = ? AND family = ''");
      u.bind(1, family);
      u.bind(2, it->second);
      u.exec();
    }
    return it->second;
  }
  SQLite::Statement q(db_, "INSERT INTO cases(run_id, family, technique, variant, params) VALUES(?,?,?,?,?)");
  q.bind(1, run_);
  q.bind(2, family);
  q.bind(3, technique);
  q.bind(4, variant);
  q.bind(5, params);
  q.exec();
  ++r_.cases;
  return cases_[key] = db_.getLastInsertRowid();
}

void Writer::measurement(std::int64_t case_id, const std::string& source, const std::string& label,
                         const Stats& stats) {
  SQLite::Statement q(db_, "INSERT INTO measurements(case_id, source, label) VALUES(?,?,?)");
  q.bind(1, case_id);
  q.bind(2, source);
  q.bind(3, label);
  q.exec();
  const std::int64_t id = db_.getLastInsertRowid();
  ++r_.measurements;
  SQLite::Statement s(db_, "INSERT OR REPLACE INTO stats(measurement_id, key, value, text) VALUES(?,?,?,?)");
  for (auto& [k, v] : stats) {
    s.bind(1, id);
    s.bind(2, k);
    if (v.number && std::isfinite(v.value))
      s.bind(3, v.value);
    else
      s.bind(3);
    if (v.number)
      s.bind(4);
    else
      s.bind(4, v.text);
    s.exec();
    s.reset();
    ++r_.stats;
  }
}

void Writer::check(std::int64_t case_id, bool passed, const json& row) {
  SQLite::Statement q(db_, "INSERT INTO checks(case_id, passed, detail) VALUES(?,?,?)");
  q.bind(1, case_id);
  q.bind(2, passed ? 1 : 0);
  q.bind(3, row.dump());
  q.exec();
  ++r_.checks;
}

void Writer::verdict(std::int64_t case_id, const json& v) {
  SQLite::Statement q(
      db_,
      "INSERT INTO verdicts(case_id, quantity, status, predicted, measured, ratio, band_lo, band_hi, unit, note) "
      "VALUES(?,?,?,?,?,?,?,?,?,?)");
  q.bind(1, case_id);
  q.bind(2, text_of(v.value("quantity", json(""))));
  q.bind(3, text_of(v.value("status", json(""))));
  int i = 4;
  for (const char* k : {"predicted", "measured", "ratio", "band_lo", "band_hi"}) {
    if (v.contains(k) && v[k].is_number() && std::isfinite(v[k].get<double>()))
      q.bind(i, v[k].get<double>());
    else
      q.bind(i);
    ++i;
  }
  q.bind(9, text_of(v.value("unit", json(""))));
  q.bind(10, text_of(v.value("note", json(""))));
  q.exec();
  ++r_.verdicts;
}

}  // namespace sp::db
