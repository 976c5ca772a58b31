#pragma once
// Per-machine references in a qualification profile: for a machine name and
// a case (technique/variant/params), the expected value of one measured
// quantity and the bounds the measurement must stay within, as fractions of
// that value: lower x value <= measured <= upper x value. A criterion of kind
// "reference" judges every reference of the machine being qualified.
//
//   "references": {"<machine>": [{"case": "gemm/kokkos/M=256,N=256,K=256",
//       "quantity": "seconds", "value": 1.8e-4, "lower": 0.9, "upper": 1.15, "unit": "s"}, ...]}
//
// quantity: "seconds" (the median time per call) or any bench.json counter
// (e.g. bytes_per_second, busbw).
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sp {

struct Reference {
  std::string case_key, quantity = "seconds", unit = "s";
  double value = 0, lower = 0, upper = 0;
};
using References = std::map<std::string, std::vector<Reference>>;  // machine -> its references

// Parses a profile's "references"; throws InputError naming the file, the
// machine and the entry (e.g. lower > upper, a value <= 0, an unknown key).
References parse_references(const nlohmann::json& j, const std::string& path);
nlohmann::json to_json(const References& r);

// The measured value of each case and quantity in a results folder:
// "technique/variant/params" -> quantity -> value.
std::map<std::string, std::map<std::string, double>> measured_quantities(const std::string& results_dir);

}  // namespace sp
