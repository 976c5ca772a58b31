#pragma once
// Renders a results folder as Markdown. Reads only the folder's JSON files,
// so every number in a report traces to a results file.
#include <string>

namespace sp {

// `title` defaults to the folder name (pass the final name when rendering a
// ResultsDir that is still in its temporary folder).
std::string render_report(const std::string& results_dir, const std::string& title = "");

}  // namespace sp
