#pragma once
// Plots are drawn by matplotlib scripts in harness/plots/ that read a results
// folder's JSON and write PNGs beside it. Python or matplotlib missing is not
// an error: the report says the plots were not drawn, and why.
#include <string>

namespace sp {

// Runs harness/plots/<script> on `dir`. Returns "" when it succeeded, else
// one line saying why no plot was drawn.
std::string draw_plots(const std::string& script, const std::string& dir);

// report.html beside report.md (harness/plots/report_html.py, jinja2): the
// folder's results with their plots inline. When it cannot be drawn, one
// note line says why and the run goes on.
void write_html_report(const std::string& dir);

}  // namespace sp
