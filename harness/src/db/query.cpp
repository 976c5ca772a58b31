#include "db/query.hpp"

#include <algorithm>
#include <cmath>

#include "scaleproof/measure.hpp"
#include "scaleproof/params.hpp"

namespace sp::db {

namespace {

// Aggregates Google Benchmark adds after the repetitions; every other label is one figure.
bool is_aggregate(const std::string& label) {
  static const std::vector<std::string> names = {"mean", "median", "stddev", "cv", "min", "max"};
  const std::string base = label.substr(0, label.find('#'));
  return std::find(names.begin(), names.end(), base) != names.end();
}

// The WHERE clause of a run filter, its values bound in order.
struct Where {
  std::string sql = " WHERE 1";
  std::vector<std::string> values;
  void add(const std::string& clause, const std::string& v) {
    if (v.empty()) return;
    sql += " AND " + clause;
    values.push_back(v);
  }
  void bind(SQLite::Statement& q) const {
    for (size_t i = 0; i < values.size(); ++i) q.bind(static_cast<int>(i + 1), values[i]);
  }
};

// Every query joins runs r with their cases c.
Where run_where(const RunFilter& f) {
  Where w;
  w.add("c.technique = ?", f.technique);
  w.add("c.variant = ?", f.variant);
  w.add("c.params = ?", f.params);
  w.add("r.machine = ?", f.machine);
  w.add("r.git_commit LIKE ? || '%'", f.commit);
  w.add("r.kind = ?", f.kind);
  w.add("substr(r.date, 1, 10) >= ?", f.since);
  w.add("substr(r.date, 1, 10) <= ?", f.until);
  return w;
}

RunRow run_row(SQLite::Statement& q) {
  RunRow r;
  r.id = q.getColumn(0).getInt64();
  r.name = q.getColumn(1).getString();
  r.path = q.getColumn(2).getString();
  r.kind = q.getColumn(3).getString();
  r.machine = q.getColumn(4).getString();
  r.commit = q.getColumn(5).getString();
  r.date = q.getColumn(6).getString();
  r.ranks = q.getColumn(7).getInt();
  return r;
}

const char* kRunColumns = "r.id, r.name, r.path, r.kind, r.machine, r.git_commit, r.date, r.ranks";

// One figure of a measurement: its label (rep<i> or an aggregate) and the statistic read.
struct Figure {
  std::string label, key;
  double value;
};

// The statistics a timing reads: the time per call of a repetition, and the measurement service's
// per-call statistics of it (absent from results written before the service).
const char* kTimingKeys = "('seconds', 't_median_s', 't_min_s', 't_p90_s')";

Timing timing_of(const std::vector<Figure>& figures) {
  std::vector<double> reps, call_median, call_min, call_p90;
  std::map<std::string, double> agg;
  for (auto& f : figures) {
    if (!std::isfinite(f.value)) continue;
    if (is_aggregate(f.label)) {
      if (f.key == "seconds") agg[f.label.substr(0, f.label.find('#'))] = f.value;
      continue;
    }
    if (f.key == "seconds") reps.push_back(f.value);
    if (f.key == "t_median_s") call_median.push_back(f.value);
    if (f.key == "t_min_s") call_min.push_back(f.value);
    if (f.key == "t_p90_s") call_p90.push_back(f.value);
  }
  Timing t;
  if (!reps.empty()) {
    t.median = median(reps);
    t.min = *std::min_element(reps.begin(), reps.end());
    t.max = *std::max_element(reps.begin(), reps.end());
    t.n = static_cast<int>(reps.size());
  } else if (agg.count("median")) {
    t.median = agg["median"];
    t.min = agg.count("min") ? agg["min"] : t.median;
    t.max = agg.count("max") ? agg["max"] : t.median;
  } else {
    t.median = NAN;
  }
  if (!call_median.empty() && call_min.size() == call_median.size() && call_p90.size() == call_median.size()) {
    t.calls = true;
    t.call_median = median(call_median);
    t.call_min = *std::min_element(call_min.begin(), call_min.end());
    t.call_p90 = *std::max_element(call_p90.begin(), call_p90.end());
  }
  return t;
}

}  // namespace

std::vector<RunRow> list_runs(Database& d, const RunFilter& f) {
  return d.read([&](SQLite::Database& db) {
    const bool by_case = !f.technique.empty() || !f.variant.empty() || !f.params.empty();
    Where w = run_where(f);
    const std::string sql = std::string("SELECT ") + kRunColumns + ", count(c.id) FROM runs r " +
                            (by_case ? "JOIN" : "LEFT JOIN") + " cases c ON c.run_id = r.id" + w.sql +
                            " GROUP BY r.id ORDER BY r.date, r.id";
    SQLite::Statement q(db, sql);
    w.bind(q);
    std::vector<RunRow> out;
    while (q.executeStep()) {
      RunRow r = run_row(q);
      r.cases = q.getColumn(8).getInt();
      out.push_back(r);
    }
    return out;
  });
}

std::vector<TrendPoint> case_trend(Database& d, const std::string& technique, const std::string& variant,
                                   const std::string& params, const RunFilter& f) {
  RunFilter g = f;
  g.technique = technique, g.variant = variant, g.params = params;
  return d.read([&](SQLite::Database& db) {
    Where w = run_where(g);
    std::string sql = std::string("SELECT ") + kRunColumns +
                      ", m.label, s.key, s.value FROM runs r JOIN cases c ON c.run_id = r.id "
                      "JOIN measurements m ON m.case_id = c.id "
                      "JOIN stats s ON s.measurement_id = m.id AND s.key IN " +
                      kTimingKeys + w.sql + " ORDER BY r.date, r.id";
    SQLite::Statement q(db, sql);
    w.bind(q);
    std::vector<TrendPoint> out;
    std::vector<Figure> figures;
    auto flush = [&] {
      if (out.empty() || figures.empty()) return;
      out.back().t = timing_of(figures);
      figures.clear();
    };
    while (q.executeStep()) {
      const std::int64_t id = q.getColumn(0).getInt64();
      if (out.empty() || out.back().run.id != id) {
        flush();
        out.push_back({run_row(q), {}});
      }
      figures.push_back({q.getColumn(8).getString(), q.getColumn(9).getString(),
                         q.getColumn(10).isNull() ? NAN : q.getColumn(10).getDouble()});
    }
    flush();
    out.erase(std::remove_if(out.begin(), out.end(), [](const TrendPoint& p) { return !std::isfinite(p.t.median); }),
              out.end());
    return out;
  });
}

std::map<std::string, std::vector<Timing>> bench_timings(Database& d, const std::vector<std::string>& machines) {
  return d.read([&](SQLite::Database& db) {
    std::string in;
    for (size_t i = 0; i < machines.size(); ++i) in += i ? ",?" : "?";
    SQLite::Statement q(
        db, std::string("SELECT c.technique || '/' || c.variant || '/' || c.params, r.id, m.label, s.key, s.value "
                        "FROM runs r JOIN cases c ON c.run_id = r.id "
                        "JOIN measurements m ON m.case_id = c.id AND m.source = 'bench' "
                        "JOIN stats s ON s.measurement_id = m.id AND s.key IN ") +
                kTimingKeys + " WHERE r.machine IN (" + in + ") ORDER BY 1, 2");
    for (size_t i = 0; i < machines.size(); ++i) q.bind(static_cast<int>(i + 1), machines[i]);
    std::map<std::string, std::map<std::int64_t, std::vector<Figure>>> figs;
    while (q.executeStep())
      figs[q.getColumn(0).getString()][q.getColumn(1).getInt64()].push_back(
          {q.getColumn(2).getString(), q.getColumn(3).getString(),
           q.getColumn(4).isNull() ? NAN : q.getColumn(4).getDouble()});
    std::map<std::string, std::vector<Timing>> out;
    for (auto& [k, runs] : figs)
      for (auto& [id, f] : runs) {
        Timing t = timing_of(f);
        if (std::isfinite(t.median) && t.median > 0) out[k].push_back(t);
      }
    return out;
  });
}

std::map<std::string, Timing> run_timings(Database& d, std::int64_t run_id) {
  return d.read([&](SQLite::Database& db) {
    SQLite::Statement exists(db, "SELECT count(*) FROM runs WHERE id = ?");
    exists.bind(1, run_id);
    exists.executeStep();
    if (exists.getColumn(0).getInt() == 0) throw InputError("--db " + d.path() + ": no run " + std::to_string(run_id));
    SQLite::Statement q(
        db,
        std::string("SELECT c.technique || '/' || c.variant || '/' || c.params, m.label, s.key, s.value FROM cases c "
                    "JOIN measurements m ON m.case_id = c.id "
                    "JOIN stats s ON s.measurement_id = m.id AND s.key IN ") +
            kTimingKeys + " WHERE c.run_id = ? ORDER BY c.id");
    q.bind(1, run_id);
    std::map<std::string, std::vector<Figure>> by_case;
    while (q.executeStep())
      by_case[q.getColumn(0).getString()].push_back({q.getColumn(1).getString(), q.getColumn(2).getString(),
                                                     q.getColumn(3).isNull() ? NAN : q.getColumn(3).getDouble()});
    std::map<std::string, Timing> out;
    for (auto& [k, figs] : by_case) {
      Timing t = timing_of(figs);
      if (std::isfinite(t.median)) out[k] = t;
    }
    return out;
  });
}

}  // namespace sp::db
