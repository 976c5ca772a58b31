#include "db/record.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>

#include "results.hpp"
#include "scaleproof/params.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace sp::db {

namespace {

struct Stat {
  bool number = true;
  double value = NAN;  // NaN is stored as NULL
  std::string text;
};
using Stats = std::map<std::string, Stat>;

// Every scalar of a JSON value under a dotted key (arrays as key[i]), so that
// per-rank and per-iteration arrays land as rows like any other statistic.
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

std::string mtime_utc(const fs::path& p) {
  std::error_code ec;
  const auto ft = fs::last_write_time(p, ec);
  if (ec) return now_utc();
  const auto sys = std::chrono::time_point_cast<std::chrono::system_clock::duration>(
      ft - fs::file_time_type::clock::now() + std::chrono::system_clock::now());
  std::time_t t = std::chrono::system_clock::to_time_t(sys);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

double to_seconds(double t, const std::string& unit) {
  if (unit == "ns") return t * 1e-9;
  if (unit == "us") return t * 1e-6;
  if (unit == "ms") return t * 1e-3;
  return t;
}

// "family/technique/variant/params[/manual_time]", as the runner names benchmarks.
bool split_bench_name(std::string name, std::string part[4]) {
  const std::string suffix = "/manual_time";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    name.resize(name.size() - suffix.size());
  size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t slash = name.find('/', pos);
    if (slash == std::string::npos) return false;
    part[i] = name.substr(pos, slash - pos);
    pos = slash + 1;
  }
  part[3] = name.substr(pos);
  return true;
}

bool is_nccl_rows(const json& j) {
  const json* rows = j.is_object() && j.contains("rows") ? &j["rows"] : &j;
  return rows->is_array() && !rows->empty() && (*rows)[0].is_object() && (*rows)[0].contains("collective");
}

bool has(const fs::path& d, const char* f) {
  std::error_code ec;
  return fs::exists(d / f, ec);
}

std::string detect_kind(const fs::path& p) {
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) {
    if (p.extension() != ".json") return "";
    try {
      return is_nccl_rows(read_json(p.string())) ? "nccl-tests" : "";
    } catch (const InputError&) {
      return "";
    }
  }
  if (!fs::is_directory(p, ec)) return "";
  if (has(p, "qualification.json")) return "qualify";
  if (has(p, "sweep.json")) return "scale";
  if (has(p, "bench.json")) return has(p, "verdicts.json") || has(p, "check.json") ? "run" : "bench";
  if (has(p, "check.json")) return "run";
  return "";
}

// The rows of one run, written inside the caller's transaction.
class Writer {
 public:
  Writer(SQLite::Database& db, Recorded& r) : db_(db), r_(r) {}

  void run(const std::string& path, const std::string& name, const std::string& kind, const json& manifest,
           const std::string& fallback_date, bool partial) {
    auto str = [&](const char* k, const std::string& dflt) {
      return manifest.contains(k) ? text_of(manifest[k]) : dflt;
    };
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

  std::int64_t case_id(const std::string& family, const std::string& technique, const std::string& variant,
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

  void measurement(std::int64_t case_id, const std::string& source, const std::string& label, const Stats& stats) {
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
      if (v.number && std::isfinite(v.value)) s.bind(3, v.value);
      else s.bind(3);
      if (v.number) s.bind(4);
      else s.bind(4, v.text);
      s.exec();
      s.reset();
      ++r_.stats;
    }
  }

  void check(std::int64_t case_id, bool passed, const json& row) {
    SQLite::Statement q(db_, "INSERT INTO checks(case_id, passed, detail) VALUES(?,?,?)");
    q.bind(1, case_id);
    q.bind(2, passed ? 1 : 0);
    q.bind(3, row.dump());
    q.exec();
    ++r_.checks;
  }

  void verdict(std::int64_t case_id, const json& v) {
    SQLite::Statement q(db_,
                        "INSERT INTO verdicts(case_id, quantity, status, predicted, measured, ratio, band_lo, band_hi, unit, note) "
                        "VALUES(?,?,?,?,?,?,?,?,?,?)");
    q.bind(1, case_id);
    q.bind(2, text_of(v.value("quantity", json(""))));
    q.bind(3, text_of(v.value("status", json(""))));
    int i = 4;
    for (const char* k : {"predicted", "measured", "ratio", "band_lo", "band_hi"}) {
      if (v.contains(k) && v[k].is_number() && std::isfinite(v[k].get<double>())) q.bind(i, v[k].get<double>());
      else q.bind(i);
      ++i;
    }
    q.bind(9, text_of(v.value("unit", json(""))));
    q.bind(10, text_of(v.value("note", json(""))));
    q.exec();
    ++r_.verdicts;
  }

 private:
  SQLite::Database& db_;
  Recorded& r_;
  std::int64_t run_ = 0;
  std::map<std::string, std::int64_t> cases_;
};

void write_bench(Writer& w, const json& bench) {
  if (!bench.contains("benchmarks") || !bench["benchmarks"].is_array()) return;
  std::map<std::string, int> seen;
  for (auto& b : bench["benchmarks"]) {
    std::string part[4];
    if (!b.is_object() || !split_bench_name(text_of(b.value("run_name", b.value("name", json("")))), part)) continue;
    const std::int64_t id = w.case_id(part[0], part[1], part[2], part[3]);
    const bool aggregate = b.value("run_type", "iteration") == "aggregate";
    std::string label = aggregate ? text_of(b.value("aggregate_name", json("aggregate")))
                                  : "rep" + std::to_string(b.value("repetition_index", 0));
    if (const int n = seen[std::to_string(id) + label]++; n > 0) label += "#" + std::to_string(n);
    Stats stats;
    flatten(b, "", stats);
    stats.erase("name");
    stats.erase("run_name");
    // One unit for every time: seconds (a cv aggregate is a ratio, not a time).
    if (b.contains("real_time") && b["real_time"].is_number() && b.value("aggregate_unit", "time") == "time")
      stats["seconds"] = {true, to_seconds(b["real_time"].get<double>(), b.value("time_unit", "ns")), ""};
    w.measurement(id, "bench", label, stats);
  }
}

void write_checks(Writer& w, const json& rows) {
  if (!rows.is_array()) return;
  for (auto& r : rows)
    if (r.is_object())
      w.check(w.case_id(text_of(r.value("family", json(""))), text_of(r.value("technique", json(""))),
                        text_of(r.value("variant", json(""))), text_of(r.value("params", json("")))),
              r.value("passed", false), r);
}

void write_verdicts(Writer& w, const json& rows) {
  if (!rows.is_array()) return;
  for (auto& v : rows)
    if (v.is_object())
      w.verdict(w.case_id("", text_of(v.value("technique", json(""))), text_of(v.value("variant", json(""))),
                          text_of(v.value("params", json("")))),
                v);
}

void write_sweep(Writer& w, const json& sweep) {
  const std::string technique = text_of(sweep.value("technique", json(""))), family = text_of(sweep.value("family", json("")));
  const std::string axis = text_of(sweep.value("axis", json("ranks")));
  for (auto& s : sweep.value("series", json::array()))
    for (auto& p : s.value("points", json::array())) {
      const std::string n = p.contains("n") ? text_of(p["n"]) : "?";
      // The key compare uses for a sweep point: technique/variant/params @ axis=n.
      const std::int64_t id = w.case_id(family, technique, text_of(s.value("variant", json(""))),
                                     text_of(s.value("params", json(""))) + " @ " + axis + "=" + n);
      Stats stats;
      flatten(p, "", stats);
      w.measurement(id, "sweep", axis + "=" + n, stats);
    }
}

void write_nccl(Writer& w, const json& doc) {
  const json& rows = doc.is_object() ? doc["rows"] : doc;
  for (auto& r : rows) {
    if (!r.is_object()) continue;
    const std::string params = "size_B=" + text_of(r.value("size_B", json(0))) + ",type=" + text_of(r.value("type", json(""))) +
                               ",op=" + text_of(r.value("op", json("")));
    const std::int64_t id = w.case_id("collectives", text_of(r.value("collective", json(""))),
                                   text_of(r.value("algorithm", json(""))), params);
    Stats stats;
    flatten(r, "", stats);
    if (r.contains("ip_time_us") && r["ip_time_us"].is_number())
      stats["seconds"] = {true, r["ip_time_us"].get<double>() * 1e-6, ""};
    w.measurement(id, "nccl-tests", "sweep", stats);
  }
}

// bench.json, check.json and verdicts.json of a folder, those present.
void write_results_files(Writer& w, const fs::path& d) {
  if (has(d, "bench.json")) write_bench(w, read_json((d / "bench.json").string()));
  if (has(d, "check.json")) write_checks(w, read_json((d / "check.json").string()));
  if (has(d, "verdicts.json")) write_verdicts(w, read_json((d / "verdicts.json").string()));
}

void write_qualification(Writer& w, const json& q) {
  for (auto& c : q.value("criteria", json::array())) {
    if (!c.is_object()) continue;
    json v = {{"quantity", c.value("name", "")}, {"status", c.value("status", "")}, {"measured", c.value("value", json())},
              {"predicted", c.value("threshold", json())}, {"unit", ""}, {"note", c.value("detail", "")}};
    w.verdict(w.case_id("", "qualify", text_of(c.value("kind", json(""))), text_of(c.value("class", json("")))), v);
  }
}

}  // namespace

std::vector<std::string> find_recordable(const std::string& path) {
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path p(path);
  if (!detect_kind(p).empty()) return {p.string()};
  if (!fs::is_directory(p, ec)) return out;
  std::vector<fs::path> children;
  for (auto& e : fs::directory_iterator(p, ec)) {
    const auto name = e.path().filename().string();
    if (name.empty() || name[0] == '.' || e.is_symlink(ec)) continue;  // temporary folders, `latest`
    children.push_back(e.path());
  }
  std::sort(children.begin(), children.end());
  for (auto& c : children)
    for (auto& f : find_recordable(c.string())) out.push_back(f);
  return out;
}

namespace {

// One item to record, every file read (and a malformed one refused) before any transaction starts.
struct Pending {
  fs::path path, dir, nested;
  std::string kind;
  json manifest = json::object();
  const json* nccl = nullptr;
};

Pending load(const std::string& path, const std::string& kind_given) {
  std::error_code ec;
  Pending pd;
  pd.path = fs::weakly_canonical(fs::absolute(path), ec);
  pd.kind = kind_given.empty() ? detect_kind(pd.path) : kind_given;
  if (pd.kind.empty()) throw InputError(path + " holds no results to record");
  const bool file = fs::is_regular_file(pd.path, ec);
  pd.dir = file ? pd.path.parent_path() : pd.path;
  if (file) {
    pd.nccl = &read_json(pd.path.string());
    if (pd.nccl->is_object() && pd.nccl->contains("manifest")) pd.manifest = (*pd.nccl)["manifest"];
    return pd;
  }
  if (has(pd.dir, "manifest.json")) {
    pd.manifest = read_json((pd.dir / "manifest.json").string());
  } else if (has(pd.dir, "bench.json")) {  // older folders: the manifest only in bench.json's context
    const auto& ctx = read_json((pd.dir / "bench.json").string()).value("context", json::object());
    for (auto& [k, v] : ctx.items())
      if (k.rfind("sp_", 0) == 0) pd.manifest[k.substr(3)] = v;
  }
  for (const char* f : {"bench.json", "check.json", "verdicts.json", "sweep.json", "scaling_verdicts.json", "qualification.json"})
    if (has(pd.dir, f)) read_json((pd.dir / f).string());
  if (pd.kind == "qualify" && fs::is_directory(pd.dir / "run", ec)) {  // qualify's own suite run
    pd.nested = pd.dir / "run";
    for (const char* f : {"bench.json", "check.json", "verdicts.json"})
      if (has(pd.nested, f)) read_json((pd.nested / f).string());
  }
  return pd;
}

Recorded write(SQLite::Database& db, const Pending& pd) {
  Recorded r;
  r.kind = pd.kind;
  SQLite::Statement q(db, "SELECT id FROM runs WHERE path = ?");
  q.bind(1, pd.path.string());
  if (q.executeStep()) {
    r.run_id = q.getColumn(0).getInt64();
    r.already = true;
    return r;
  }
  Writer w(db, r);
  w.run(pd.path.string(), pd.path.filename().string(), pd.kind, pd.manifest, mtime_utc(pd.path), has(pd.dir, "PARTIAL"));
  if (pd.nccl) {
    write_nccl(w, *pd.nccl);
    return r;
  }
  write_results_files(w, pd.dir);
  if (has(pd.dir, "sweep.json")) write_sweep(w, read_json((pd.dir / "sweep.json").string()));
  if (has(pd.dir, "scaling_verdicts.json")) write_verdicts(w, read_json((pd.dir / "scaling_verdicts.json").string()));
  if (pd.kind == "qualify") {
    write_qualification(w, read_json((pd.dir / "qualification.json").string()));
    if (!pd.nested.empty()) write_results_files(w, pd.nested);
  }
  return r;
}

}  // namespace

std::vector<Recorded> record(Database& d, const std::vector<std::string>& paths, const std::string& kind) {
  std::vector<Pending> pending;
  for (auto& p : paths) pending.push_back(load(p, kind));
  std::vector<Recorded> out;
  d.write([&](SQLite::Database& db) {
    out.clear();  // all items or none: one transaction
    for (auto& pd : pending) out.push_back(write(db, pd));
  });
  return out;
}

void record_committed(const Options& o, const std::string& path, const std::string& kind) {
  if (!o.enabled()) return;
  Database d(o, true);
  const Recorded r = record(d, {path}, kind).front();
  std::printf("database: %s run %lld (%d cases, %d measurements, %d checks, %d verdicts)\n", d.path().c_str(), static_cast<long long>(r.run_id),
              r.cases, r.measurements, r.checks, r.verdicts);
}

}  // namespace sp::db
