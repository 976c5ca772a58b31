#pragma once
// The hybrid_step technique's parameters as a model shape and a layout.
// dp = 0 stands for "every rank tp and pp leave" (world / (tp pp)), so a
// parameter set can run at any rank count that divides; every rule a layout
// must satisfy is layout_error()'s (kernels/hybrid/layout.hpp).
#include "kernels/hybrid/layout.hpp"
#include "scaleproof/params.hpp"

namespace sp::hybrid {

ModelShape model_of(const Params& p);
Layout layout_of(const Params& p, int world);
// One line naming what is wrong with the case at `world` ranks, "" when fine.
std::string case_error(const Params& p, int world);

}  // namespace sp::hybrid
