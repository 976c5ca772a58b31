#pragma once
// Reference for a stack of linear + ReLU blocks (kernels/precision/
// layer_stack.hpp), long double, with the per-element bound the fp32
// forward must meet. Layer l computes z = y_l W_l, then max(z, 0). With e_l
// the bound on |y^_l - y_l| entering the layer, a length-H dot product of
// the computed y^_l (Higham eq. 3.5) and ReLU's Lipschitz constant 1 give
//   e_(l+1) = gamma_H (|y_l| + e_l) |W_l| + e_l |W_l|,   e_0 = 0.
#include <cmath>
#include <vector>

namespace sp::reference {

inline void stack_ref(int B, int H, const std::vector<float>& X, const std::vector<const std::vector<float>*>& weights,
                      double gamma_H, std::vector<long double>& y, std::vector<long double>& bound) {
  y.assign(X.begin(), X.end());
  bound.assign(y.size(), 0.0L);
  std::vector<long double> z(y.size()), e(y.size());
  for (const auto* W : weights) {
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < H; ++j) {
        long double s = 0, grow = 0;
        for (int k = 0; k < H; ++k) {
          const long double w = (*W)[size_t(k) * H + j], yk = y[size_t(b) * H + k], ek = bound[size_t(b) * H + k];
          s += yk * w;
          grow += (gamma_H * (std::fabs(yk) + ek) + ek) * std::fabs(w);
        }
        z[size_t(b) * H + j] = s > 0 ? s : 0;
        e[size_t(b) * H + j] = grow;
      }
    y.swap(z), bound.swap(e);
  }
}

}  // namespace sp::reference
