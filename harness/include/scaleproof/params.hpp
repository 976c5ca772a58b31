#pragma once
// Parameter sets: the shapes a technique runs at, as ordered key=value pairs.
// A technique declares several, each tagged with a size class so that the
// conformance tests take the small ones and benchmarks the larger ones.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sp {

// Bad user input: the CLI prints what() as one line and exits with code 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Size { conformance, small, medium, large };
const char* to_string(Size s);
Size parse_size(const std::string& s);  // throws InputError

class Params {
 public:
  Params() = default;
  Params(std::initializer_list<std::pair<std::string, std::string>> kv);

  bool has(const std::string& key) const;
  const std::string& s(const std::string& key) const;  // throws InputError if absent
  int64_t i(const std::string& key) const;             // parsed, throws on non-integer
  double d(const std::string& key) const;
  int64_t i_or(const std::string& key, int64_t fallback) const;
  std::string s_or(const std::string& key, const std::string& fallback) const;

  Params& set(const std::string& key, const std::string& value);
  Params& set(const std::string& key, int64_t value);
  const std::vector<std::pair<std::string, std::string>>& items() const { return kv_; }

  // "M=64,N=33,dtype=fp32": stable, used in benchmark names and results.
  std::string label() const;
  static Params parse(const std::string& label);  // inverse of label(); throws InputError

 private:
  std::vector<std::pair<std::string, std::string>> kv_;
};

struct ParamSet {
  Size size;
  Params params;
};

}  // namespace sp
