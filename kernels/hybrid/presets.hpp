#pragma once
// Published model shapes and the layouts their authors trained them with
// (docs/planner.md, "Presets"): GPT-2 small, GPT-3 175B, and the ten rows of
// Narayanan et al. (SC'21) Table 1, 1.7B to 1T parameters, each with its
// tensor- and pipeline-parallel degrees, GPU count and global batch.
#include <string>
#include <vector>

#include "kernels/hybrid/layout.hpp"

namespace sp::hybrid {

struct Preset {
  std::string name;
  ModelShape model;              // vocab and global_batch as published (Megatron pads vocab to 51200)
  double published_params;       // the source's own count
  double published_digits;       // unit of the last digit the source prints it to (e.g. 1e8 for "1.7B")
  int tp = 1, pp = 1, gpus = 1;  // the published layout (dp = gpus / (tp pp))
  std::string source;
};

const std::vector<Preset>& presets();
const Preset* find_preset(const std::string& name);  // nullptr when unknown
std::string preset_names();                          // "a, b, c" for messages

}  // namespace sp::hybrid
