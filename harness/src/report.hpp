#pragma once
// Renders a results folder as Markdown. Reads only the folder's JSON files,
// so every number in a report traces to a results file.
#include <string>

namespace sp {

std::string render_report(const std::string& results_dir);

}  // namespace sp
