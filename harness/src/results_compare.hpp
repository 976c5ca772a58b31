#pragma once
// `scaleproof compare A B`: per technique, variant and parameter set (and,
// for scaling folders, per point), the time ratio B / A between two results
// folders. A ratio above 1 + threshold is a regression (the CI gate).
#include <map>
#include <string>
#include <vector>

namespace sp {

// key -> median seconds. From bench.json (technique/variant/params) or, for a
// scaling folder, sweep.json's timed points (technique/variant/params @ axis=N;
// oversubscribed points are not timings and are left out). Throws InputError
// when the folder has neither.
std::map<std::string, double> read_timings(const std::string& dir);

// A row's outcome: b / a above 1 + threshold (regression), below 1 / (1 +
// threshold) (faster), between (same); a key in one folder only; or no
// usable time (zero, negative or not finite) on either side.
enum class CompareStatus { regression, faster, same, only_in_a, only_in_b, no_time };
// "REGRESSION", "faster", "same", "only in A", "only in B", "no time".
const char* to_string(CompareStatus s);

struct CompareRow {
  std::string key;
  double a = 0, b = 0, ratio = 0;  // ratio = b / a (time: above 1 is slower)
  CompareStatus status = CompareStatus::no_time;
};

std::vector<CompareRow> compare_timings(const std::map<std::string, double>& a, const std::map<std::string, double>& b,
                                        double threshold);

}  // namespace sp
