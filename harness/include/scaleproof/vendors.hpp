#pragma once
// Vendor libraries a family compares with. Each registers a hook that
// configures its library for the run's threads per rank (the Kokkos
// kernels' thread count, so that the two compete on equal threads) and
// returns, as (key, value) pairs, what the manifest records of it: which
// implementation runs and how.
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

struct VendorRegistrar {
  VendorRegistrar(const std::string& name, VendorHook hook) { vendors().push_back({name, std::move(hook)}); }
};

}  // namespace sp

#define SP_VENDOR_CONCAT_(a, b) a##b
#define SP_VENDOR_CONCAT(a, b) SP_VENDOR_CONCAT_(a, b)
#define SP_REGISTER_VENDOR(name, fn) \
  static ::sp::VendorRegistrar SP_VENDOR_CONCAT(sp_vendor_registrar_, __LINE__)(name, fn)
