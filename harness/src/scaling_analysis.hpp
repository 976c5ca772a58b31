#pragma once
// Fits and verdicts of a sweep, from sweep.json only: speedup, efficiency
// and the Karp-Flatt serial fraction at every point; Amdahl (strong) or
// Gustafson (weak) fitted on the points that were timed meaningfully (not
// oversubscribed); each timed speedup judged against the fitted law within
// the declared band. Formulas: docs/SCALING.md, "Scaling laws".
#include <nlohmann/json.hpp>
#include <vector>

#include "scaleproof/technique.hpp"

namespace sp {

struct ScalingAnalysis {
  nlohmann::json fits;            // fits.json: one entry per series
  std::vector<Verdict> verdicts;  // one per timed point beyond the reference, one per series
};

ScalingAnalysis analyse_sweep(const nlohmann::json& sweep);

}  // namespace sp
