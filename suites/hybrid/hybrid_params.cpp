#include "suites/hybrid/hybrid_params.hpp"

namespace sp::hybrid {

ModelShape model_of(const Params& p) {
  ModelShape m;
  m.layers = int(p.i("layers"));
  m.hidden = int(p.i("hidden"));
  m.heads = int(p.i("heads"));
  m.seq = int(p.i("seq"));
  m.global_batch = int(p.i("batch"));
  return m;
}

Layout layout_of(const Params& p, int world) {
  Layout l;
  l.tp = int(p.i("tp"));
  l.pp = int(p.i("pp"));
  l.dp = int(p.i("dp"));
  if (l.dp == 0 && l.tp > 0 && l.pp > 0) l.dp = world / (l.tp * l.pp);
  l.v = int(p.i("v"));
  l.micro_batches = int(p.i("mb"));
  l.schedule = mp::parse_schedule(p.s("schedule"));
  l.zero_stage = int(p.i("zero"));
  l.storage = parse_storage(p.s("storage"));
  l.ckpt_every = int(p.i("ckpt"));
  return l;
}

std::string case_error(const Params& p, int world) {
  // Sizes within which every index and count of the step fits in int.
  for (const char* k : {"layers", "hidden", "heads", "seq", "batch", "mb", "v", "steps"})
    if (p.i(k) > (int64_t(1) << 14)) return std::string(k) + " above 2^14 is not supported";
  const ModelShape m = model_of(p);
  const Layout l = layout_of(p, world);
  if (p.i("dp") == 0 && world % (l.tp * l.pp) != 0)
    return "dp=0 takes the ranks tp x pp leave, but tp x pp = " + std::to_string(l.tp * l.pp) + " does not divide " +
           std::to_string(world) + " ranks";
  std::string e = layout_error(m, l, world);
  if (!e.empty()) return e;
  if (2LL * l.micro_batches * l.pp * l.v >= 32767)
    return "mb x pp x v too large for the pipeline's message tags (2 mb pp v < 32767)";
  const long long n = (long long)l.micro_batch_size(m) * m.seq;
  if (n * m.ffn_width() / l.tp >= (1LL << 31) || n * m.seq * (m.heads / l.tp) >= (1LL << 31))
    return "a micro-batch's activations exceed 2^31 elements";
  return {};
}

}  // namespace sp::hybrid
