#pragma once
// Reference for the FMA-chain probe: the same recurrence, in long double, one
// chain at a time.
#include <cstdint>

namespace sp::reference {

// Returns the sum over lanes of x_iters, with x_0 = 0.5 + 0.001*((w + l) % 64).
inline long double fma_chain_item(int64_t w, int lanes, int64_t iters, long double a, long double b,
                                  long double* max_abs_x) {
  long double s = 0, mx = 0;
  for (int l = 0; l < lanes; ++l) {
    long double x = 0.5L + 0.001L * static_cast<long double>((w + l) % 64);
    for (int64_t k = 0; k < iters; ++k) {
      x = x * a + b;
      if ((x < 0 ? -x : x) > mx) mx = x < 0 ? -x : x;
    }
    s += x;
  }
  *max_abs_x = mx;
  return s;
}

}  // namespace sp::reference
