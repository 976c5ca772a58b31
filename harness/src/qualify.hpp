#pragma once
// Machine qualification: a profile (JSON) declares thresholds for a machine;
// each criterion is judged from a `scaleproof run` results folder's JSON
// (check.json, bench.json, verdicts.json) and reported as PASS, FAIL or SKIP,
// also as JUnit XML for CI. The profile format is in docs/SCALING.md.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reference.hpp"

namespace sp {

struct Criterion {
  std::string name, kind;         // kind: conformance | roof_fraction | busbw | prediction_error | reference
  std::string cls;                // kernel class: a family or technique name ("" = all)
  double threshold = 0;           // min (roof_fraction, busbw in GB/s) or max (prediction_error)
  std::string counter = "busbw";  // busbw: the bench.json counter, bytes/s
  bool optional = false;          // no data -> SKIP instead of FAIL
  std::string quantity;           // reference: only references of this quantity ("" = all)
};

struct Profile {
  std::string machine, description;
  std::vector<Criterion> criteria;
  References references;  // per machine name (reference.hpp)
};

struct QualifyOptions {
  std::string machine;             // whose references judge the run ("" = the run manifest's host name)
  bool require_reference = false;  // a reference criterion with no reference for that machine fails
};

Profile load_profile(const std::string& path);  // throws InputError naming the problem

// A criterion's outcome: judged (pass, fail), or skip where the results hold
// nothing it applies to and it is optional (or its reference is missing).
enum class CriterionStatus { pass, fail, skip };
// "PASS", "FAIL", "SKIP": the spelling in qualification.json, JUnit and reports.
const char* to_string(CriterionStatus s);

struct CriterionResult {
  Criterion c;
  CriterionStatus status = CriterionStatus::fail;
  double value = 0;  // the judged number (worst case over the matching cases)
  std::string detail;
};

std::vector<CriterionResult> qualify(const Profile& p, const std::string& results_dir, const QualifyOptions& q = {});
// The machine a results folder was measured on (its manifest's host name), "" if unknown.
std::string results_machine(const std::string& results_dir);
nlohmann::json to_json(const Profile& p, const std::vector<CriterionResult>& r);
std::string junit_xml(const Profile& p, const std::vector<CriterionResult>& r);
std::string qualification_markdown(const Profile& p, const std::vector<CriterionResult>& r);

}  // namespace sp
