#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "models.hpp"
#include "results.hpp"

namespace fs = std::filesystem;

namespace sp {

namespace {

double finite_number(const nlohmann::json& e, const char* key, const std::string& where) {
  if (!e.contains(key) || !e[key].is_number() || !std::isfinite(e[key].get<double>()))
    throw InputError(where + ": needs a finite number \"" + key + "\"");
  return e[key].get<double>();
}

}  // namespace

References parse_references(const nlohmann::json& j, const std::string& path) {
  References out;
  if (!j.is_object()) throw InputError(path + ": \"references\" is an object: machine name -> list of references");
  static const std::set<std::string> keys = {"case", "quantity", "value", "lower", "upper", "unit"};
  for (auto& [machine, list] : j.items()) {
    if (!list.is_array()) throw InputError(path + ": references of '" + machine + "' are not a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const auto& e = list[i];
      const std::string where = path + ": reference " + std::to_string(i) + " of '" + machine + "'";
      if (!e.is_object()) throw InputError(where + " is not an object");
      for (auto& [k, v] : e.items())
        if (!keys.count(k)) throw InputError(where + ": unknown key '" + k + "'");
      Reference r;
      if (e.contains("case") && e["case"].is_string()) r.case_key = e["case"];
      if (std::count(r.case_key.begin(), r.case_key.end(), '/') < 2)
        throw InputError(where + ": needs \"case\": \"technique/variant/params\"");
      r.quantity = e.value("quantity", "seconds");
      r.unit = e.value("unit", r.quantity == "seconds" ? "s" : "");
      r.value = finite_number(e, "value", where);
      r.lower = finite_number(e, "lower", where);
      r.upper = finite_number(e, "upper", where);
      if (!(r.value > 0)) throw InputError(where + ": \"value\" must be > 0");
      if (r.lower < 0) throw InputError(where + ": \"lower\" must be >= 0");
      if (r.lower > r.upper)
        throw InputError(where + ": \"lower\" " + std::to_string(r.lower) + " is above \"upper\" " +
                         std::to_string(r.upper));
      out[machine].push_back(r);
    }
  }
  return out;
}

nlohmann::json to_json(const References& refs) {
  nlohmann::json j = nlohmann::json::object();
  for (auto& [machine, list] : refs) {
    auto& a = j[machine] = nlohmann::json::array();
    for (auto& r : list)
      a.push_back({{"case", r.case_key},
                   {"quantity", r.quantity},
                   {"value", r.value},
                   {"lower", r.lower},
                   {"upper", r.upper},
                   {"unit", r.unit}});
  }
  return j;
}

std::map<std::string, std::map<std::string, double>> measured_quantities(const std::string& dir) {
  std::map<std::string, std::map<std::string, double>> out;
  const fs::path bench = fs::path(dir) / "bench.json";
  if (!fs::exists(bench)) return out;
  for (auto& c : read_measurements(read_json(bench.string()))) {
    auto& q = out[c.technique + "/" + c.variant + "/" + c.params];
    q["seconds"] = c.m.seconds;
    for (auto& [k, v] : c.m.counters) q[k] = v;
  }
  return out;
}

}  // namespace sp
