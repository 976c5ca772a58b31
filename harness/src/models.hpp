#pragma once
// Models and verdicts: reads a Google Benchmark JSON (never the live run),
// derives the machine roofs from the roof-probe techniques, and asks each
// technique to judge its measurements against its predictions.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scaleproof/registry.hpp"

namespace sp {

struct MeasuredCase {
  std::string family, technique, variant, params;
  Measurement m;
  double min_s = 0, max_s = 0;  // over repetitions
};

std::vector<MeasuredCase> read_measurements(const nlohmann::json& bench);
Machine derive_machine(const std::vector<MeasuredCase>& cases);
// Every ratio a verdict judges is >= 0 (a time, rate or count ratio), so a
// band [lo <= 0, inf] holds every value it can take: such a verdict cannot
// fail and is never a PASS. judge() turns each into INFO, with a note.
bool band_cannot_fail(const Verdict& v);
void demote_unfailable(std::vector<Verdict>& vs);
// Vendor libraries that did not run their best implementation in a run, with
// the reason: library -> its manifest fact kVendorNotAtBest (vendors.hpp).
using NotAtBest = std::map<std::string, std::string>;
NotAtBest not_at_best(const nlohmann::json& manifest);
// A throughput verdict against a baseline whose library is in `weak` is
// INFO: the ratio is to a handicapped library, not a result.
std::vector<Verdict> judge(const std::vector<MeasuredCase>& cases, const Machine& machine, const NotAtBest& weak = {});
nlohmann::json to_json(const Machine& m);
nlohmann::json to_json(const std::vector<Verdict>& v);
std::vector<Verdict> verdicts_from_json(const nlohmann::json& j);

}  // namespace sp
