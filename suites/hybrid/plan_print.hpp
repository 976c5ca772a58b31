#pragma once
// The plan and the verification as console tables and as JSON documents.
#include <nlohmann/json.hpp>
#include <string>

#include "suites/hybrid/plan_search.hpp"
#include "suites/hybrid/plan_verify.hpp"

namespace sp::hybrid::plan {

std::string plan_table(const Request& r, const Plan& p, int top, const std::string& preset);
nlohmann::json plan_json(const Request& r, const Plan& p, int top, const std::string& preset);
nlohmann::json to_json(const Layout& l);
std::string verify_table(const VerifyResult& v);
nlohmann::json verify_json(const VerifyResult& v);

}  // namespace sp::hybrid::plan
