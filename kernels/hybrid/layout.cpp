#include "kernels/hybrid/layout.hpp"

#include "scaleproof/params.hpp"

namespace sp::hybrid {

std::string layout_error(const ModelShape& m, const Layout& l, int world) {
  auto s = [](long long x) { return std::to_string(x); };
  if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.seq < 1 || m.global_batch < 1 || m.ffn < 0 || m.vocab < 0)
    return "model: layers, hidden, heads, seq and global_batch must be >= 1";
  if (l.dp < 1 || l.tp < 1 || l.pp < 1 || l.v < 1 || l.micro_batches < 1)
    return "layout: dp, tp, pp, v and micro_batches must be >= 1";
  if (static_cast<long long>(l.dp) * l.tp * l.pp != world)
    return "layout: dp x tp x pp = " + s(static_cast<long long>(l.dp) * l.tp * l.pp) + " but there are " + s(world) +
           " ranks";
  if (m.hidden % m.heads != 0) return "model: hidden " + s(m.hidden) + " is not divisible by heads " + s(m.heads);
  if (m.heads % l.tp != 0) return "layout: heads " + s(m.heads) + " are not divisible by tp " + s(l.tp);
  if (m.ffn_width() % l.tp != 0) return "layout: ffn " + s(m.ffn_width()) + " is not divisible by tp " + s(l.tp);
  const bool inter = l.schedule == mp::ScheduleKind::interleaved;
  if (!inter && l.v != 1) return "layout: v > 1 needs the interleaved schedule";
  if (inter && l.micro_batches % l.pp != 0)
    return "layout: interleaved needs micro_batches (" + s(l.micro_batches) + ") divisible by pp (" + s(l.pp) + ")";
  if (m.layers % (l.pp * l.v) != 0)
    return "layout: layers " + s(m.layers) + " are not divisible by pp x v = " + s(l.pp * l.v);
  if (m.global_batch % (static_cast<long long>(l.dp) * l.micro_batches) != 0)
    return "layout: global_batch " + s(m.global_batch) +
           " is not divisible by dp x micro_batches = " + s(static_cast<long long>(l.dp) * l.micro_batches);
  if (l.zero_stage < 0 || l.zero_stage > 3) return "layout: zero_stage must be 0, 1, 2 or 3";
  const int per_chunk = m.layers / (l.pp * l.v);
  if (l.ckpt_every < 0 || l.ckpt_every > per_chunk)
    return "layout: ckpt_every must be in 0.." + s(per_chunk) + " (blocks per chunk)";
  return {};
}

GridCoord grid_coord(const Layout& l, int rank) {
  GridCoord c;
  c.tp = rank % l.tp;
  c.dp = (rank / l.tp) % l.dp;
  c.pp = rank / (l.tp * l.dp);
  return c;
}

double element_bytes(StorageType t) { return t == StorageType::fp64 ? 8 : t == StorageType::fp32 ? 4 : 2; }

const char* to_string(StorageType t) {
  switch (t) {
    case StorageType::fp32: return "fp32";
    case StorageType::fp16: return "fp16";
    case StorageType::bf16: return "bf16";
    case StorageType::fp64: return "fp64";
  }
  return "?";
}

StorageType parse_storage(const std::string& s) {
  if (s == "fp32") return StorageType::fp32;
  if (s == "fp16") return StorageType::fp16;
  if (s == "bf16") return StorageType::bf16;
  if (s == "fp64") return StorageType::fp64;
  throw InputError("storage must be fp32, fp16, bf16 or fp64, not '" + s + "'");
}

}  // namespace sp::hybrid
