#pragma once
// Vendor libraries a family compares with. Each registers a hook that
// configures its library for the run's threads per rank (the Kokkos
// kernels' thread count, so that the two compete on equal threads) and
// returns, as (key, value) pairs, what the manifest records of it: which
// implementation runs and how.
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace sp {

using VendorFacts = std::vector<std::pair<std::string, std::string>>;
using VendorHook = std::function<VendorFacts(int threads)>;

inline std::vector<std::pair<std::string, VendorHook>>& vendors() {
  static std::vector<std::pair<std::string, VendorHook>> v;
  return v;
}

// The fact a library's hook adds, with the reason, where the library does
// not run the best implementation it has for this machine (a user's setting
// chose a slower one): a ratio against it measures the setting, not the
// library, so verdicts against it are reported, not judged (judge()).
inline constexpr const char* kVendorNotAtBest = "not_at_best";

struct VendorRegistrar {
  VendorRegistrar(const std::string& name, VendorHook hook) { vendors().push_back({name, std::move(hook)}); }
};

// A library that picks its implementation when it is loaded, from the
// environment (OpenBLAS's OPENBLAS_CORETYPE), cannot be set once main() runs.
// Its hook says which variables it needs, and why: scaleproof then sets
// them and starts itself again, once, before MPI or Kokkos start
// (harness/src/vendor_env.hpp). A variable the user set is never replaced.
struct VendorEnv {
  std::string var, value, why;
};
using VendorEnvHook = std::function<std::vector<VendorEnv>()>;

inline std::vector<VendorEnvHook>& vendor_env_hooks() {
  static std::vector<VendorEnvHook> v;
  return v;
}

struct VendorEnvRegistrar {
  explicit VendorEnvRegistrar(VendorEnvHook hook) { vendor_env_hooks().push_back(std::move(hook)); }
};

// The variable that marks a process started again with the vendors'
// variables and says what was set and why: "VAR=VALUE: why", "; " between
// settings. A process that finds it never restarts, so a run restarts at most
// once, and the ranks it launches inherit the variables and the mark.
inline constexpr const char* kVendorEnvMark = "SCALEPROOF_VENDOR_ENV";

// The mark's setting of `var` ("VAR=VALUE: why"), "" where scaleproof set none.
inline std::string vendor_env_setting(const std::string& var) {
  const char* mark = std::getenv(kVendorEnvMark);
  if (!mark) return "";
  const std::string m = mark, key = var + "=";
  for (size_t at = 0; at < m.size();) {
    const size_t end = m.find("; ", at);
    const std::string one = m.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (one.compare(0, key.size(), key) == 0) return one;
    if (end == std::string::npos) break;
    at = end + 2;
  }
  return "";
}

}  // namespace sp

#define SP_VENDOR_CONCAT_(a, b) a##b
#define SP_VENDOR_CONCAT(a, b) SP_VENDOR_CONCAT_(a, b)
#define SP_REGISTER_VENDOR(name, fn) \
  static ::sp::VendorRegistrar SP_VENDOR_CONCAT(sp_vendor_registrar_, __LINE__)(name, fn)
#define SP_REGISTER_VENDOR_ENV(fn) \
  static ::sp::VendorEnvRegistrar SP_VENDOR_CONCAT(sp_vendor_env_registrar_, __LINE__)(fn)
