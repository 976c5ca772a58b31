#include "scaleproof/option_range.hpp"

#include <map>

namespace sp::cli {

namespace {
std::map<const CLI::Option*, Bounds>& table() {
  static std::map<const CLI::Option*, Bounds> t;
  return t;
}
}  // namespace

CLI::Option* range(CLI::Option* opt, double lo, double hi, bool lo_open) {
  table()[opt] = {lo, hi, lo_open};
  return opt;
}

CLI::Option* positive(CLI::Option* opt, double hi) { return range(opt, 0, hi, true); }

const Bounds* bounds_of(const CLI::Option* opt) {
  auto it = table().find(opt);
  return it == table().end() ? nullptr : &it->second;
}

}  // namespace sp::cli
