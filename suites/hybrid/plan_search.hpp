#pragma once
// The planner's search (docs/planner.md, "Search"): every layout of a model
// on N ranks over dp x tp x pp, schedule and v, micro-batch count, ZeRO
// stage and checkpointing; layout_error() and the memory budget reject, the
// time model ranks the rest.
#include <string>
#include <utility>
#include <vector>

#include "kernels/hybrid/megatron.hpp"
#include "kernels/hybrid/time_model.hpp"

namespace sp::hybrid::plan {

struct Request {
  ModelShape model;
  int ranks = 1;
  double memory_bytes = 0;  // per rank
  StorageType storage = StorageType::bf16;
  MachineFigures machine;
  megatron::MemoryOptions memory;
};

struct Candidate {
  Layout layout;
  megatron::Memory memory;  // on the most loaded rank (pipeline stage 0)
  StepTime time;            // of the slower of the first and last pipeline stage
};

struct Plan {
  std::vector<Candidate> ranked;  // every layout that is valid and fits, fastest first
  // Rejected layouts per reason (layout_error()'s line with its numbers
  // replaced by N, or the memory budget), most frequent first.
  std::vector<std::pair<std::string, long long>> rejected;
  long long enumerated = 0;
  double smallest_rejected_memory = 0;  // bytes, over the layouts the budget rejected (0: none)
};

// The enumeration space, in a fixed order: factorizations dp x tp x pp of
// `ranks`; gpipe and 1f1b with v = 1, interleaved with v = 2..8 (1f1b alone
// at pp = 1, where the schedules differ only in activations held); micro-batch
// counts that divide the global batch; ZeRO 0..3 (0 alone at dp = 1, where
// every stage is the same layout); checkpointing every
// 0, 1, 2, 4, ... blocks up to the layer count.
std::vector<Layout> enumerate_layouts(const ModelShape& m, int ranks, StorageType storage);

// The work of world rank `rank` in the time model's terms, from the cost
// model's predictions (cost_model.hpp) and the grid: tensor-parallel
// collectives are ring all-reduces; data-parallel ones all-reduces without
// ZeRO, else reduce-scatters and all-gathers counted one each.
StepWork work_of(const ModelShape& m, const Layout& l, int rank);
Candidate evaluate(const Request& r, const Layout& l);

Plan make_plan(const Request& r);

// "N" for every run of digits: the family of one layout_error() line.
std::string reason_family(const std::string& why);
// One line: "dp=4 tp=2 pp=2 1f1b m=8 zero=1 ckpt=0" (v shown when interleaved).
std::string describe(const Layout& l);

}  // namespace sp::hybrid::plan
