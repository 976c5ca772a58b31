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

// Each variant once: its name and what it runs. The order is the one the
// harness runs and reports them in.
struct NamedVariant {
  const char* name;
  Variant v;
};
inline constexpr NamedVariant kVariants[] = {
    {"ddp", {Strategy::ddp}},
    {"ddp_overlap", {Strategy::ddp, true}},
    {"zero1", {Strategy::zero1}},
    {"zero2", {Strategy::zero2}},
    {"zero2_overlap", {Strategy::zero2, true}},
    {"zero3", {Strategy::zero3}},
    {"zero3_prefetch", {Strategy::zero3, true}},
    {"zero_offload", {Strategy::zero2, false, true}},
    {"param_server", {Strategy::param_server}},
};

inline std::vector<std::string> variant_names() {
  std::vector<std::string> v;
  for (auto& n : kVariants) v.push_back(n.name);
  return v;
}

inline Variant parse_variant(const std::string& s) {
  for (auto& n : kVariants)
    if (s == n.name) return n.v;
  throw std::invalid_argument("unknown data-parallel variant '" + s + "'");
}

}  // namespace sp::dp
