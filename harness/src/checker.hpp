#pragma once
// Conformance: every selected case and variant runs once and is compared with
// the technique's reference. Results are reduced over ranks.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "selection.hpp"

namespace sp {

struct CheckRow {
  std::string family, technique, variant, params;
  CheckResult result;
  std::string error;  // an exception thrown by the technique
  bool passed() const { return error.empty() && result.passed(); }
};

CheckRow check_one(const Registered& r, const Params& p, const std::string& variant);
std::vector<CheckRow> check_cases(const std::vector<Case>& cases, bool progress);
nlohmann::json to_json(const std::vector<CheckRow>& rows);
std::string check_table(const std::vector<CheckRow>& rows);  // PASSED/FAILED table

}  // namespace sp
