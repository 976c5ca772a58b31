#include "results_compare.hpp"

#include <cmath>
#include <filesystem>

#include "models.hpp"
#include "results.hpp"

namespace fs = std::filesystem;

namespace sp {

std::map<std::string, double> read_timings(const std::string& dir) {
  const fs::path d(dir);
  if (!fs::is_directory(d)) throw InputError("no results folder at " + dir);
  std::map<std::string, double> t;
  if (fs::exists(d / "bench.json")) {
    for (auto& c : read_measurements(read_json((d / "bench.json").string())))
      t[c.technique + "/" + c.variant + "/" + c.params] = c.m.seconds;
  } else if (fs::exists(d / "sweep.json")) {
    const auto& sweep = read_json((d / "sweep.json").string());
    try {
      for (auto& s : sweep.at("series"))
        for (auto& p : s.at("points"))
          if (!p.at("oversubscribed").get<bool>())
            t[sweep.at("technique").get<std::string>() + "/" + s.at("variant").get<std::string>() + "/" +
              s.at("params").get<std::string>() + " @ " + sweep.at("axis").get<std::string>() + "=" +
              std::to_string(p.at("n").get<int>())] = p.at("seconds").get<double>();
    } catch (const nlohmann::json::exception&) {
      throw InputError(dir + "/sweep.json is not a scaling sweep");
    }
  } else {
    throw InputError(dir + " has neither bench.json nor sweep.json");
  }
  return t;
}

const char* to_string(CompareStatus s) {
  switch (s) {
    case CompareStatus::regression: return "REGRESSION";
    case CompareStatus::faster: return "faster";
    case CompareStatus::same: return "same";
    case CompareStatus::only_in_a: return "only in A";
    case CompareStatus::only_in_b: return "only in B";
    case CompareStatus::no_time: return "no time";
  }
  return "?";
}

std::vector<CompareRow> compare_timings(const std::map<std::string, double>& a, const std::map<std::string, double>& b,
                                        double threshold) {
  // NaN would fail every comparison and let any slowdown through as "same".
  if (!(threshold > 0) || !std::isfinite(threshold)) throw InputError("--threshold must be a finite number > 0");
  std::vector<CompareRow> rows;
  for (auto& [k, ta] : a) {
    CompareRow r{k, ta};
    auto it = b.find(k);
    if (it == b.end()) {
      r.status = CompareStatus::only_in_a;
    } else {
      r.b = it->second;
      r.ratio = ta > 0 ? r.b / ta : 0;
      if (!(ta > 0) || !std::isfinite(ta) || !(r.b > 0) || !std::isfinite(r.b))
        r.status = CompareStatus::no_time;
      else
        r.status = r.ratio > 1 + threshold         ? CompareStatus::regression
                   : r.ratio < 1 / (1 + threshold) ? CompareStatus::faster
                                                   : CompareStatus::same;
    }
    rows.push_back(r);
  }
  for (auto& [k, tb] : b)
    if (!a.count(k)) rows.push_back({k, 0, tb, 0, CompareStatus::only_in_b});
  return rows;
}

}  // namespace sp
