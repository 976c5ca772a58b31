#include "scaleproof/params.hpp"

#include <charconv>
#include <cstdlib>

namespace sp {

const char* to_string(Size s) {
  switch (s) {
    case Size::conformance: return "conformance";
    case Size::small: return "small";
    case Size::medium: return "medium";
    case Size::large: return "large";
  }
  return "?";
}

Size parse_size(const std::string& s) {
  for (Size v : {Size::conformance, Size::small, Size::medium, Size::large})
    if (s == to_string(v)) return v;
  throw InputError("unknown size '" + s + "' (expected conformance, small, medium or large)");
}

Params::Params(std::initializer_list<std::pair<std::string, std::string>> kv) {
  for (auto& [k, v] : kv) set(k, v);
}

bool Params::has(const std::string& key) const {
  for (auto& [k, v] : kv_)
    if (k == key) return true;
  return false;
}

const std::string& Params::s(const std::string& key) const {
  for (auto& [k, v] : kv_)
    if (k == key) return v;
  throw InputError("missing parameter '" + key + "'");
}

static bool parse_int(const std::string& v, int64_t& out) {
  const char* b = v.data();
  const char* e = b + v.size();
  auto r = std::from_chars(b, e, out);
  return r.ec == std::errc() && r.ptr == e;
}

int64_t Params::i(const std::string& key) const {
  int64_t out = 0;
  const std::string& v = s(key);
  if (!parse_int(v, out)) throw InputError("parameter " + key + "='" + v + "' is not an integer");
  return out;
}

double Params::d(const std::string& key) const {
  const std::string& v = s(key);
  char* end = nullptr;
  double out = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0') throw InputError("parameter " + key + "='" + v + "' is not a number");
  return out;
}

int64_t Params::i_or(const std::string& key, int64_t fallback) const { return has(key) ? i(key) : fallback; }
std::string Params::s_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? s(key) : fallback;
}

Params& Params::set(const std::string& key, const std::string& value) {
  if (key.empty() || key.find_first_of("=,/ ") != std::string::npos)
    throw InputError("bad parameter name '" + key + "'");
  if (value.find_first_of(",/ ") != std::string::npos)
    throw InputError("bad value '" + value + "' for parameter " + key);
  for (auto& [k, v] : kv_)
    if (k == key) {
      v = value;
      return *this;
    }
  kv_.emplace_back(key, value);
  return *this;
}

Params& Params::set(const std::string& key, int64_t value) { return set(key, std::to_string(value)); }

std::string Params::label() const {
  std::string out;
  for (auto& [k, v] : kv_) {
    if (!out.empty()) out += ',';
    out += k + '=' + v;
  }
  return out;
}

Params Params::parse(const std::string& label) {
  Params p;
  size_t pos = 0;
  while (pos < label.size()) {
    size_t comma = label.find(',', pos);
    if (comma == std::string::npos) comma = label.size();
    std::string item = label.substr(pos, comma - pos);
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError("malformed parameter '" + item + "' (expected KEY=VALUE)");
    if (p.has(item.substr(0, eq))) throw InputError("--set: parameter " + item.substr(0, eq) + " given twice");
    p.set(item.substr(0, eq), item.substr(eq + 1));
    pos = comma + 1;
  }
  return p;
}

}  // namespace sp
