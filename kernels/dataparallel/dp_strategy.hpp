#pragma once
// The data-parallel strategies the trainer runs, by variant name.
//   param_server    rank 0 receives every gradient, updates, sends parameters back
//   ddp             ring all-reduce of per-layer gradient buckets after backward
//   ddp_overlap     the same all-reduces, non-blocking, started as each bucket is produced
//   zero1           reduce-scatter grads, update own optimizer shard, all-gather params
//   zero2           reduce-scatter each layer's gradient as backward produces it, free it
//   zero2_overlap   zero2 with the reduce-scatters non-blocking
//   zero3           params sharded: all-gather each layer before forward and backward
//   zero3_prefetch  zero3 with the next layer's all-gather started before the current layer computes,
//                   and its gradient reduce-scatters non-blocking
//   zero_offload    zero2 with optimizer state, master shard and Adam in host memory
#include <stdexcept>
#include <string>
#include <vector>

namespace sp::dp {

enum class Strategy { param_server, ddp, zero1, zero2, zero3 };

struct Variant {
  Strategy strategy = Strategy::ddp;
  bool overlap = false;  // non-blocking collectives interleaved with compute
  bool offload = false;  // optimizer in host memory
};

inline const std::vector<std::string>& variant_names() {
  static const std::vector<std::string> v = {"ddp",   "ddp_overlap",    "zero1",        "zero2",       "zero2_overlap",
                                             "zero3", "zero3_prefetch", "zero_offload", "param_server"};
  return v;
}

inline Variant parse_variant(const std::string& s) {
  if (s == "param_server") return {Strategy::param_server};
  if (s == "ddp") return {Strategy::ddp};
  if (s == "ddp_overlap") return {Strategy::ddp, true};
  if (s == "zero1") return {Strategy::zero1};
  if (s == "zero2") return {Strategy::zero2};
  if (s == "zero2_overlap") return {Strategy::zero2, true};
  if (s == "zero3") return {Strategy::zero3};
  if (s == "zero3_prefetch") return {Strategy::zero3, true};
  if (s == "zero_offload") return {Strategy::zero2, false, true};
  throw std::invalid_argument("unknown data-parallel variant '" + s + "'");
}

}  // namespace sp::dp
