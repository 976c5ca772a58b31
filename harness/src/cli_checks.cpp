#include "cli_checks.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "results.hpp"
#include "scaleproof/kokkos_compat.hpp"
#include "scaleproof/params.hpp"
#include "scaleproof/registry.hpp"

namespace sp::cli {

namespace {

std::string g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

bool numeric_type(const CLI::Option* o) {
  const std::string t = o->get_type_name();
  return t == "INT" || t == "UINT" || t == "FLOAT";
}
bool integer_type(const CLI::Option* o) {
  const std::string t = o->get_type_name();
  return t == "INT" || t == "UINT";
}

// The check of one value; "" when it is acceptable.
std::string check_value(const CLI::Option* o, const std::string& v) {
  if (v.empty()) return "empty value";
  if (!numeric_type(o)) return "";
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  if (*end != '\0') return "'" + v + "' is not a number";
  if (std::isnan(x)) return "NaN is not accepted";
  if (std::isinf(x)) return v + " is not finite";
  if (errno == ERANGE && std::fabs(x) > 1) return v + " is out of range";
  if (integer_type(o)) {
    long long i = 0;
    auto r = std::from_chars(v.data(), v.data() + v.size(), i);
    if (r.ptr != v.data() + v.size() || (r.ec != std::errc() && r.ec != std::errc::result_out_of_range))
      return "'" + v + "' is not an integer";
    if (r.ec == std::errc::result_out_of_range) return g(x) + " is out of range";
  }
  if (const Bounds* bp = bounds_of(o)) {
    const Bounds& b = *bp;
    if (x < b.lo || (b.lo_open && x == b.lo) || x > b.hi)
      return std::string("must be in ") + (b.lo_open ? "(" : "[") + g(b.lo) + ", " + g(b.hi) + "] (got " + g(x) + ")";
  }
  return "";
}

void harden_app(CLI::App* app) {
  for (CLI::Option* o : app->get_options()) {
    if (o->get_expected_max() == 0) continue;  // a flag: it takes no value
    const CLI::Option* key = o;
    o->check(CLI::Validator([key](std::string& v) { return check_value(key, v); }, "", "sp-value"));
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) harden_app(sub);
}

nlohmann::json describe_app(CLI::App* app, const std::string& path) {
  nlohmann::json out = nlohmann::json::array();
  for (CLI::Option* o : app->get_options()) {
    if (o->get_name() == "--help" || o->get_name() == "--help-all") continue;
    nlohmann::json j{{"command", path},
                     {"name", o->get_positional() ? o->get_name(true) : o->get_name()},
                     {"positional", o->get_positional()},
                     {"flag", o->get_expected_max() == 0},
                     {"type", o->get_type_name()},
                     {"required", o->get_required()},
                     {"multiple", o->get_items_expected_max() > 1}};
    if (const Bounds* b = bounds_of(o)) j["range"] = {{"min", b->lo}, {"max", b->hi}, {"min_open", b->lo_open}};
    out.push_back(j);
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    const std::string p = path.empty() ? sub->get_name() : path + " " + sub->get_name();
    for (auto& j : describe_app(sub, p)) out.push_back(j);
  }
  return out;
}

const char* type_name(ParamType t) {
  return t == ParamType::integer ? "integer" : t == ParamType::number ? "number" : "text";
}

}  // namespace

CLI::Validator folder_name() {
  return CLI::Validator(
      [](std::string& v) {
        try {
          check_folder_name(v);
        } catch (const InputError& e) {
          std::string m = e.what();
          return m.substr(m.find(':') + 2);
        }
        return std::string();
      },
      "", "sp-folder-name");
}

void harden(CLI::App& app) { harden_app(&app); }

nlohmann::json describe(CLI::App& app) {
  nlohmann::json techniques = nlohmann::json::array();
  for (auto& r : Registry::get().all()) {
    nlohmann::json params = nlohmann::json::array();
    for (auto& [k, v] : r.info.param_sets.front().params.items()) {
      nlohmann::json p{{"name", k}, {"type", type_name(param_type(r.info, k))}, {"example", v}};
      double lo = param_type(r.info, k) == ParamType::integer ? 1 : -INFINITY, hi = INFINITY;
      for (auto& rule : r.info.param_rules)
        if (rule.name == k) lo = rule.lo, hi = rule.hi;
      if (std::isfinite(lo)) p["min"] = lo;
      if (std::isfinite(hi) && hi < 9e18) p["max"] = hi;
      params.push_back(p);
    }
    techniques.push_back(
        {{"name", r.info.name},
         {"family", r.info.family},
         {"test_only", r.info.test_only},
         {"ranks", {{"min", r.info.ranks.min}, {"max", r.info.ranks.max}, {"power_of_two", r.info.ranks.power_of_two}}},
         {"params", params}});
  }
  return {{"options", describe_app(&app, "")}, {"techniques", techniques}};
}

int resolve_threads(int option_value, int local_ranks) {
  const int max = kx::max_host_threads();
  int threads = option_value;
  if (threads > max)
    throw InputError("--threads " + std::to_string(threads) + ": above " + std::to_string(max) +
                     ", the most threads per process Kokkos's host back end supports");
  if (threads == 0 && std::getenv("OMP_NUM_THREADS")) {
    std::string env = std::getenv("OMP_NUM_THREADS");
    env = env.substr(0, env.find(','));  // a nested list: the outer level's count
    long long v = 0;
    auto r = std::from_chars(env.data(), env.data() + env.size(), v);
    const bool ok = r.ec == std::errc() && r.ptr == env.data() + env.size() && v >= 1 && v <= max;
    if (!ok)
      throw InputError("OMP_NUM_THREADS='" + env + "': not a thread count in [1, " + std::to_string(max) +
                       "] (unset it or pass --threads)");
    threads = static_cast<int>(v);
  }
  if (threads <= 0)
    threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / std::max(1, local_ranks));
  return std::min(threads, max);
}

}  // namespace sp::cli
