#pragma once
// What a collective case reports (bandwidths, phase times, traffic counted
// by the transport, the calibrated model) and how it is judged against
// docs/collectives.md.
#include <map>
#include <string>
#include <vector>

#include "scaleproof/technique.hpp"
#include "suites/collectives/engine.hpp"

namespace sp::coll {

// Sizes below this are latency-dominated: predictions there are reported,
// not judged (the bands of docs/collectives.md, "Verdicts", apply at
// >= 1 MiB).
constexpr double kJudgedBytes = 1 << 20;

// The model check's probe (measure.hpp): the median of the collective's own
// calls, each timed after a calibration sample, in seconds.
inline constexpr const char* kModelCheck = "t_model_check_s";
// The probe step that takes one calibration sample (Engine::Sampler).
inline constexpr const char* kCalibrationSample = "calibration sample";

// Collective over ranks (every rank calls it in the same order). `out`
// holds the service's call statistics; phase_seconds sums `calls` calls.
void collect_counters(Engine& e, const Algorithm& algo, long calls, const std::map<std::string, double>& phase_seconds,
                      std::map<std::string, double>& out);
// alpha, beta, gamma fitted to the samples taken during the model check, and
// the model's time (collective).
void fit_model(Engine& e, const Algorithm& algo, const Engine::Sampler& sampler, std::map<std::string, double>& out);

void judge_case(const sp::Info& info, const CaseSpec& s, const std::string& label, const Algorithm& algo,
                const sp::Measurement& m, std::vector<sp::Verdict>& out);

}  // namespace sp::coll
