#include "db/record.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>

#include "db/writer.hpp"
#include "results.hpp"
#include "scaleproof/params.hpp"

namespace fs = std::filesystem;

namespace sp::db {

namespace {

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
    // The kept iteration times (up to a thousand per repetition) stay in bench.json, which the run's path
    // names: the database holds their statistics (t_min_s .. t_max_s, over every iteration) and how many
    // were kept, so that a row per sample does not multiply its size by a thousand.
    json row = b;
    if (row.contains("iteration_seconds") && row["iteration_seconds"].is_array()) {
      stats["iteration_seconds_kept"] = {true, static_cast<double>(row["iteration_seconds"].size()), ""};
      row.erase("iteration_seconds");
    }
    flatten(row, "", stats);
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
  const std::string technique = text_of(sweep.value("technique", json(""))),
                    family = text_of(sweep.value("family", json("")));
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
    const std::string params = "size_B=" + text_of(r.value("size_B", json(0))) +
                               ",type=" + text_of(r.value("type", json(""))) +
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
    json v = {{"quantity", c.value("name", "")},
              {"status", c.value("status", "")},
              {"measured", c.value("value", json())},
              {"predicted", c.value("threshold", json())},
              {"unit", ""},
              {"note", c.value("detail", "")}};
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
  for (const char* f :
       {"bench.json", "check.json", "verdicts.json", "sweep.json", "scaling_verdicts.json", "qualification.json"})
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
  w.run(pd.path.string(), pd.path.filename().string(), pd.kind, pd.manifest, mtime_utc(pd.path),
        has(pd.dir, "PARTIAL"));
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
  std::printf("database: %s run %lld (%d cases, %d measurements, %d checks, %d verdicts)\n", d.path().c_str(),
              static_cast<long long>(r.run_id), r.cases, r.measurements, r.checks, r.verdicts);
}

}  // namespace sp::db
