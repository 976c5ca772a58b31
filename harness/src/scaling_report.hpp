#pragma once
// The Markdown section of a scaling results folder (scaling.md), rendered
// from its sweep.json and fits.json only, with the PNGs the plot script drew.
#include <string>

namespace sp {

std::string render_scaling(const std::string& dir, const std::string& plot_note);

}  // namespace sp
