#pragma once
// Shared glue of the model-parallel techniques: deterministic inputs that
// every rank can generate for the full tensors (each then slices its shard),
// host <-> View copies, element-wise comparison with bounded references, and
// verdicts for exactly counted quantities.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "kernels/modelparallel/dense.hpp"
#include "reference/modelparallel/bounded.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/technique.hpp"

namespace sp::mp {

// Values in [-scale, scale) from a hash of (seed, index): no structure a bug could hide behind.
inline std::vector<double> fill(size_t count, uint64_t seed, double scale) {
  std::vector<double> v(count);
  for (size_t i = 0; i < count; ++i) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    v[i] = scale * (static_cast<double>(z >> 11) * 0x1p-53 * 2 - 1);
  }
  return v;
}

inline Mat to_view(const std::vector<double>& v, int rows, int cols, const char* name = "m") {
  Mat m(std::string(name), rows, cols);
  using H =
      Kokkos::View<const double**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::deep_copy(m, H(v.data(), rows, cols));
  return m;
}

// got(i, j) against want(row0 + i, col(j)) for every element, each with its own bound.
inline void compare(
    sp::Comparator& cmp, CMat got, const sp::reference::EbMat& want, int row0 = 0,
    const std::function<int(int)>& col = [](int j) { return j; }) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got);
  for (int i = 0; i < static_cast<int>(h.extent(0)); ++i)
    for (int j = 0; j < static_cast<int>(h.extent(1)); ++j) {
      const auto& w = want(row0 + i, col(j));
      cmp.add(h(i, j), static_cast<double>(w.v), static_cast<double>(w.e));
    }
}

// Counters equal to 0 are not reported: Google Benchmark writes the
// coefficient of variation of an all-zero counter as a bare nan (invalid
// JSON). Readers take an absent counter as 0 (counter_or_zero).
inline void drop_zeros(std::map<std::string, double>& counters) {
  for (auto it = counters.begin(); it != counters.end();) it = it->second == 0 ? counters.erase(it) : std::next(it);
}
inline double counter_or_zero(const sp::Measurement& m, const std::string& name) {
  auto it = m.counters.find(name);
  return it == m.counters.end() ? 0.0 : it->second;
}

}  // namespace sp::mp
