// The parameter schema every technique's parameters are checked against
// before any work: types from the declared parameter sets, ranges from
// Info::param_rules (default integer >= 1), products in 128 bits.
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "scaleproof/technique.hpp"

namespace sp {

namespace {

std::string g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

bool is_integer(const std::string& v) {
  int64_t x;
  auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  return !v.empty() && r.ec == std::errc() && r.ptr == v.data() + v.size();
}

bool is_number(const std::string& v, double* out = nullptr) {
  if (v.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  if (*end != '\0') return false;
  if (out) *out = errno == ERANGE && std::fabs(x) > 1 ? INFINITY : x;
  return true;
}

const ParamRule* rule_for(const Info& info, const std::string& key) {
  for (auto& r : info.param_rules)
    if (r.name == key) return &r;
  return nullptr;
}

}  // namespace

ParamType param_type(const Info& info, const std::string& key) {
  bool seen = false, all_int = true, all_num = true;
  for (auto& ps : info.param_sets)
    for (auto& [k, v] : ps.params.items())
      if (k == key) {
        seen = true;
        all_int = all_int && is_integer(v);
        all_num = all_num && is_number(v);
      }
  if (!seen) return ParamType::text;
  return all_int ? ParamType::integer : all_num ? ParamType::number : ParamType::text;
}

void check_param_value(const Info& info, const std::string& key, const std::string& value) {
  const std::string where = info.name + ": parameter " + key;
  if (value.empty()) throw InputError(where + " has an empty value");
  const ParamType type = param_type(info, key);
  if (type == ParamType::text) return;
  double x = 0;
  if (!is_number(value, &x))
    throw InputError(where + "='" + value + "' is not " + (type == ParamType::integer ? "an integer" : "a number"));
  if (std::isnan(x)) throw InputError(where + " is NaN");
  if (std::isinf(x)) throw InputError(where + "=" + value + " is not finite");
  if (type == ParamType::integer && !is_integer(value)) {
    if (x == std::floor(x)) throw InputError(where + "=" + g(x) + " is outside the 64-bit integers");
    throw InputError(where + "=" + value + " is not an integer");
  }
  const ParamRule* r = rule_for(info, key);
  const double lo = r ? r->lo : (type == ParamType::integer ? 1 : -INFINITY);
  const double hi = r ? r->hi : INFINITY;
  if (x < lo || x > hi) {
    std::string range = std::isinf(hi) || hi >= 9e18 ? ">= " + g(lo) : "in [" + g(lo) + ", " + g(hi) + "]";
    throw InputError(where + " must be " + range + " (got " + g(x) + ")");
  }
}

void check_params(const Info& info, const Params& p) {
  std::vector<std::pair<std::string, int64_t>> ints;
  for (auto& [k, v] : p.items()) {
    check_param_value(info, k, v);
    if (param_type(info, k) == ParamType::integer) ints.emplace_back(k, p.i(k));
  }
  // Kernels index with products of two sizes in 64 bits; larger products
  // (and the bytes a case needs) are the memory check's, in floating point.
  const __int128 limit = static_cast<__int128>(1) << 62;
  for (size_t a = 0; a < ints.size(); ++a)
    for (size_t b = a + 1; b < ints.size(); ++b) {
      const __int128 product = static_cast<__int128>(ints[a].second) * ints[b].second;
      if (product > limit || product < -limit)
        throw InputError(info.name + ": " + ints[a].first + " x " + ints[b].first + " = " +
                         g(static_cast<double>(ints[a].second) * static_cast<double>(ints[b].second)) +
                         " exceeds 2^62; sizes this large cannot be indexed");
    }
}

}  // namespace sp
