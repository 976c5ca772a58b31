#pragma once
// hybrid_step's counted quantities (from the step's MemoryTracker and
// transports) beside the cost model's predictions of the same quantities,
// the verdicts that compare them (band [1, 1]), the FLOPs of a call and the
// GEMM shapes it multiplies.
#include <string>
#include <vector>

#include "kernels/hybrid/step.hpp"
#include "kernels/nn/gemm_rate.hpp"
#include "scaleproof/technique.hpp"

namespace sp::hybrid {

// Named quantities, the same names in the same order on both sides.
struct Counted {
  std::vector<std::string> names;
  std::vector<double> values;
};
Counted counted(const MemoryTracker& mem, const StepCounters& c, double steps);
Counted predicted(const ModelShape& m, const Layout& l, int rank);

sp::Counts hybrid_counts(const Params& p, int nranks);
std::vector<nn::GemmShape> gemm_shapes(const ModelShape& m, const Layout& l, int steps);

void append_hybrid_verdicts(const std::string& name, const Params& p, const std::string& variant, const Measurement& m,
                            std::vector<Verdict>& out);

}  // namespace sp::hybrid
