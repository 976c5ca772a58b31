#pragma once
// The first screen of a main job's report: the machine and its measured
// roofs, one row per family (conformance, verdicts, headline figures), the
// launches, then every failure with its reason. Read from the results
// folder's files, so `scaleproof report` renders it for any folder.
#include <string>

namespace sp {

std::string render_summary(const std::string& dir);

}  // namespace sp
