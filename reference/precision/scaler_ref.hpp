#pragma once
// Reference for dynamic loss scaling, written from the description of
// torch.amp.GradScaler (docs/precision.md "Mixed precision") as a function of the
// whole overflow history rather than as an object: the scale in force at
// step t is init * backoff^(#overflows before t) * growth^(#completed clean
// runs of length `interval` since the last overflow, summed over the
// history). Returns the scale used at each step and whether the step applied.
#include <vector>

namespace sp::reference {

struct ScaleTrace {
  std::vector<double> scale_used;  // the S the loss was multiplied by at step t
  std::vector<bool> applied;       // the optimizer step ran (no inf/NaN)
};

inline ScaleTrace scaler_trace(const std::vector<bool>& overflow, double init = 65536.0, double growth = 2.0,
                               double backoff = 0.5, int interval = 2000) {
  ScaleTrace tr;
  for (size_t t = 0; t < overflow.size(); ++t) {
    // Recount from scratch for every step: O(T^2) and independent of any carried state.
    double s = init;
    int clean_run = 0;
    for (size_t u = 0; u < t; ++u) {
      if (overflow[u]) {
        s *= backoff;
        clean_run = 0;
      } else if (++clean_run % interval == 0) {
        s *= growth;
      }
    }
    tr.scale_used.push_back(s);
    tr.applied.push_back(!overflow[t]);
  }
  return tr;
}

}  // namespace sp::reference
