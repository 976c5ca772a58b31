#include "plots.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "launch.hpp"

namespace fs = std::filesystem;

namespace sp {

std::string draw_plots(const std::string& script, const std::string& dir) {
  // Debian's interpreter, where python3-matplotlib installs; SP_PYTHON overrides.
  const char* env = std::getenv("SP_PYTHON");
  const std::string python = env && *env ? env : "/usr/bin/python3";
  const std::string path = (fs::path(SP_PLOTS_DIR) / script).string();
  if (access(python.c_str(), X_OK) != 0) return "plots not drawn: no Python interpreter at " + python;
  if (!fs::exists(path)) return "plots not drawn: " + path + " is missing";
  const std::string log = (fs::temp_directory_path() / ("sp-plot-" + std::to_string(getpid()) + ".log")).string();
  auto r = run_with_watchdog({python, path, dir}, {{"MPLBACKEND", "Agg"}}, log, 120);
  const std::string last = last_line(log);
  fs::remove(log);
  if (r.ok()) return "";
  return "plots not drawn: " + script + " " + r.describe() + (last.empty() ? "" : ": " + last);
}

void write_html_report(const std::string& dir) {
  const std::string note = draw_plots("report_html.py", dir);
  if (!note.empty()) std::printf("note: report.html not written: %s\n", note.c_str());
}

}  // namespace sp
