// Shapes, inputs, reference check and predictions of the tensor-parallel techniques.
#include "suites/modelparallel/tp_model.hpp"

#include "kernels/modelparallel/tp_comm.hpp"
#include "reference/modelparallel/transformer_ref.hpp"
#include "suites/modelparallel/mp_data.hpp"

namespace sp::mp {

using reference::EbMat;

std::string tp_name(TpKind k) {
  switch (k) {
    case TpKind::column: return "tp_column_linear";
    case TpKind::row: return "tp_row_linear";
    case TpKind::mlp: return "tp_mlp";
    case TpKind::attention: return "tp_attention";
    case TpKind::layer: return "tp_transformer_layer";
  }
  return "?";
}

std::string tp_summary(TpKind k) {
  switch (k) {
    case TpKind::column: return "column-parallel linear X[A1..At] (all-reduce of dX backward)";
    case TpKind::row: return "row-parallel linear (all-reduce of Y forward)";
    case TpKind::mlp: return "Megatron MLP: column-parallel, GeLU, row-parallel";
    case TpKind::attention: return "causal self-attention split by heads (QKV column, output row)";
    case TpKind::layer: return "transformer layer X+Attn, +MLP (no norms/dropout)";
  }
  return "?";
}

TpShape TpShape::from(const Params& p) {
  TpShape s;
  s.b = static_cast<int>(p.i("b"));
  s.s = static_cast<int>(p.i("s"));
  s.h = static_cast<int>(p.i("h"));
  s.heads = static_cast<int>(p.i_or("heads", 1));
  s.ffn = static_cast<int>(p.i_or("ffn", s.h));
  return s;
}

namespace {
bool has_heads(TpKind k) { return k == TpKind::attention || k == TpKind::layer; }
bool has_ffn(TpKind k) { return k != TpKind::attention; }
}  // namespace

Params tp_params(TpKind k, int b, int s, int h, int heads, int ffn) {
  Params p{{"b", std::to_string(b)}, {"s", std::to_string(s)}, {"h", std::to_string(h)}};
  if (has_heads(k)) p.set("heads", heads);
  if (has_ffn(k)) p.set("ffn", ffn);
  return p;
}

void tp_check_shape(TpKind k, const TpShape& sh, int t) {
  const std::string who = tp_name(k) + ": ";
  if (has_heads(k)) {
    if (sh.h % t != 0)
      throw InputError(who + "hidden size h = " + std::to_string(sh.h) +
                       " is not divisible by t = " + std::to_string(t) + " ranks");
    if (sh.h % sh.heads != 0)
      throw InputError(who + "hidden size h = " + std::to_string(sh.h) +
                       " is not divisible by heads = " + std::to_string(sh.heads));
    if (sh.heads % t != 0)
      throw InputError(who + "heads = " + std::to_string(sh.heads) + " is not divisible by t = " + std::to_string(t) +
                       " ranks");
  }
  if (has_ffn(k) && sh.ffn % t != 0)
    throw InputError(who + "ffn = " + std::to_string(sh.ffn) + " is not divisible by t = " + std::to_string(t) +
                     " ranks");
  if (static_cast<int64_t>(sh.n()) * std::max(sh.h, sh.ffn) * 3 > (int64_t(1) << 28))
    throw InputError(who + "tensors above 2^28 elements are not supported");
}

double tp_flops(TpKind k, const TpShape& sh) {
  const double n = sh.n(), h = sh.h, f = sh.ffn;
  // forward 2 n k o per linear layer, backward twice that; attention core about 6 b s^2 h (causal half).
  const double attn = 6 * n * h * 4 * h + 6.0 * sh.b * sh.s * sh.s * h;
  switch (k) {
    case TpKind::column:
    case TpKind::row: return 6 * n * h * f;
    case TpKind::mlp: return 12 * n * h * f;
    case TpKind::attention: return attn;
    case TpKind::layer: return attn + 12 * n * h * f;
  }
  return 0;
}

std::vector<nn::GemmShape> tp_gemm_shapes(TpKind k, const TpShape& sh, int t) {
  const int n = sh.n(), h = sh.h, f = sh.ffn;
  std::vector<nn::GemmShape> g;
  // A linear layer [in x out] on n rows: Y = X W, dW = X^T dY, dX = dY W^T.
  auto linear = [&](int in, int out) {
    g.push_back({n, out, in});
    g.push_back({in, out, n});
    g.push_back({n, in, out});
  };
  auto attention = [&] {
    const int hl = h / t, d = h / sh.heads;
    linear(h, 3 * hl);
    linear(hl, h);
    // Per (sample, local head): S = Q K^T, O = P V; dP = dO V^T, dQ = dS K, dK = dS^T Q, dV = P^T dO.
    const double pairs = double(sh.b) * (sh.heads / t);
    g.push_back({sh.s, sh.s, d, 2 * pairs});
    g.push_back({sh.s, d, sh.s, 4 * pairs});
  };
  switch (k) {
    case TpKind::column: linear(h, f / t); break;
    case TpKind::row: linear(f / t, h); break;
    case TpKind::mlp: linear(h, f / t), linear(f / t, h); break;
    case TpKind::attention: attention(); break;
    case TpKind::layer: attention(), linear(h, f / t), linear(f / t, h); break;
  }
  return g;
}

TpData TpData::make(TpKind k, const TpShape& sh) {
  TpData d;
  const int n = sh.n(), h = sh.h, f = sh.ffn;
  auto put = [&](const std::string& name, int r, int c, uint64_t seed, double scale) {
    d.host[name] = fill(static_cast<size_t>(r) * c, seed, scale);
    d.dims[name] = {r, c};
  };
  put("X", n, k == TpKind::row ? f : h, 1, 1.0);
  put("dY", n, k == TpKind::column ? f : h, 2, 1.0);
  put("A", h, f, 3, 1.0 / std::sqrt(h));
  put("B", f, h, 4, 1.0 / std::sqrt(f));
  // Larger Q and K weights make the attention probabilities far from uniform.
  put("Wq", h, h, 5, 3.0 / std::sqrt(h));
  put("Wk", h, h, 6, 3.0 / std::sqrt(h));
  put("Wv", h, h, 7, 1.0 / std::sqrt(h));
  put("Wo", h, h, 8, 1.0 / std::sqrt(h));
  return d;
}

Mat TpData::view(const std::string& name) const {
  auto [r, c] = dims.at(name);
  return to_view(host.at(name), r, c, name.c_str());
}

namespace {

EbMat ex(const TpData& d, const std::string& name) {
  auto [r, c] = d.dims.at(name);
  return reference::exact(d.host.at(name), r, c);
}

struct RefLayer {
  EbMat Y, dX;
  std::vector<EbMat> grads;  // full weight gradients, in the layer's shard order
};

RefLayer reference_of(TpKind k, const TpShape& sh, const TpData& d) {
  RefLayer r;
  const EbMat X = ex(d, "X"), dY = ex(d, "dY");
  const reference::AttnDims ad{sh.b, sh.s, sh.heads, sh.h / sh.heads};
  switch (k) {
    case TpKind::column:
    case TpKind::row: {
      const EbMat W = ex(d, k == TpKind::column ? "A" : "B");
      r.Y = reference::matmul(X, false, W, false);
      r.dX = reference::matmul(dY, false, W, true);
      r.grads = {reference::matmul(X, true, dY, false)};
      break;
    }
    case TpKind::mlp: {
      const EbMat A = ex(d, "A"), B = ex(d, "B");
      auto f = reference::mlp_forward(X, A, B);
      auto g = reference::mlp_backward(f, X, A, B, dY);
      r.Y = f.Y, r.dX = g.dX, r.grads = {g.dA, g.dB};
      break;
    }
    case TpKind::attention:
    case TpKind::layer: {
      const EbMat Wq = ex(d, "Wq"), Wk = ex(d, "Wk"), Wv = ex(d, "Wv"), Wo = ex(d, "Wo");
      const EbMat Wqkv = reference::concat_cols({&Wq, &Wk, &Wv});
      auto af = reference::attention_forward(ad, X, Wqkv, Wo);
      if (k == TpKind::attention) {
        auto ag = reference::attention_backward(ad, af, X, Wqkv, Wo, dY);
        r.Y = af.Y, r.dX = ag.dX, r.grads = {ag.dWqkv, ag.dWo};
        break;
      }
      const EbMat A = ex(d, "A"), B = ex(d, "B");
      const EbMat X1 = reference::add(X, af.Y);
      auto mf = reference::mlp_forward(X1, A, B);
      r.Y = reference::add(X1, mf.Y);
      auto mg = reference::mlp_backward(mf, X1, A, B, dY);
      const EbMat dX1 = reference::add(dY, mg.dX);
      auto ag = reference::attention_backward(ad, af, X, Wqkv, Wo, dX1);
      r.dX = reference::add(dX1, ag.dX);
      r.grads = {ag.dWqkv, ag.dWo, mg.dA, mg.dB};
      break;
    }
  }
  return r;
}

}  // namespace

CheckResult tp_check(TpKind k, const TpShape& sh, const TpData& d, int rank, int t, const TpOutputs& got) {
  const RefLayer ref = reference_of(k, sh, d);
  Comparator cmp("running error bound, gamma_K|a||b| per dot in any order (bounded.hpp)");
  const int fl = sh.ffn / t, hl = sh.h / t;
  auto shard_cols = [](int c0) { return [c0](int j) { return c0 + j; }; };
  // Fused QKV shard column j: block j / hl (Q, K or V), this rank's heads within it.
  auto qkv_cols = [&](int j) { return (j / hl) * sh.h + rank * hl + j % hl; };
  switch (k) {
    case TpKind::column:  // Y and dA are column shards, dX is whole
      compare(cmp, got.y, ref.Y, 0, shard_cols(rank * fl));
      compare(cmp, got.dx, ref.dX);
      compare(cmp, got.grads[0], ref.grads[0], 0, shard_cols(rank * fl));
      break;
    case TpKind::row:  // Y is whole, dX a column shard, dB a row shard
      compare(cmp, got.y, ref.Y);
      compare(cmp, got.dx, ref.dX, 0, shard_cols(rank * fl));
      compare(cmp, got.grads[0], ref.grads[0], rank * fl);
      break;
    case TpKind::mlp:
      compare(cmp, got.y, ref.Y);
      compare(cmp, got.dx, ref.dX);
      compare(cmp, got.grads[0], ref.grads[0], 0, shard_cols(rank * fl));
      compare(cmp, got.grads[1], ref.grads[1], rank * fl);
      break;
    case TpKind::attention:
    case TpKind::layer:
      compare(cmp, got.y, ref.Y);
      compare(cmp, got.dx, ref.dX);
      compare(cmp, got.grads[0], ref.grads[0], 0, qkv_cols);
      compare(cmp, got.grads[1], ref.grads[1], rank * hl);
      if (k == TpKind::layer) {
        compare(cmp, got.grads[2], ref.grads[2], 0, shard_cols(rank * fl));
        compare(cmp, got.grads[3], ref.grads[3], rank * fl);
      }
      break;
  }
  return cmp.result();
}

TpPrediction tp_predict(TpKind k, const TpShape& sh, int t) {
  const double n = sh.n(), h = sh.h, f = sh.ffn, heads = sh.heads;
  double ring = 0;  // one all-reduce of an [n, h] activation, summed over ranks
  for (int r = 0; r < t; ++r) ring += ring_allreduce_bytes(static_cast<size_t>(n * h), t, r);
  // Kept for the backward: a column-parallel layer keeps its (replicated)
  // input, a row-parallel one its local input shard; the MLP adds GeLU's
  // input; attention adds Q K V, the probabilities and the context.
  const double mlp_stash = n * h + 2 * n * f / t;
  const double attn_stash = n * h + 3 * n * h / t + sh.b * (heads / t) * sh.s * double(sh.s) + n * h / t;
  TpPrediction p{};
  switch (k) {
    case TpKind::column: p = {0, 1, ring, h * f / t, n * h, 0}; break;
    case TpKind::row: p = {1, 0, ring, f * h / t, n * f / t, 0}; break;
    case TpKind::mlp: p = {1, 1, 2 * ring, 2 * h * f / t, mlp_stash, 0}; break;
    case TpKind::attention: p = {1, 1, 2 * ring, 4 * h * h / t, attn_stash, 0}; break;
    case TpKind::layer: p = {2, 2, 4 * ring, 4 * h * h / t + 2 * h * f / t, mlp_stash + attn_stash, 0}; break;
  }
  // sbh (10 + 24/t + 5 a s / (h t)) bytes; sbh = n h.
  p.korthikanti_bytes = n * h * (10 + 24.0 / t + 5 * heads * sh.s / (h * t));
  return p;
}

void tp_verdicts(const Info& info, TpKind k, const Params& p, const std::string& variant, const Measurement& m,
                 std::vector<Verdict>& out) {
  const TpShape sh = TpShape::from(p);
  const int t = m.ranks;
  const TpPrediction pr = tp_predict(k, sh, t);
  auto counter = [&](const char* name) { return counter_or_zero(m, name); };
  const std::string ts = "t=" + std::to_string(t);
  out.push_back(sp::exact_verdict(info.name, variant, p, "all-reduces forward per call", "calls", pr.allreduce_fwd,
                                  counter("allreduce_fwd"), ts + "; Megatron g operator after row-parallel layers"));
  out.push_back(sp::exact_verdict(info.name, variant, p, "all-reduces backward per call", "calls", pr.allreduce_bwd,
                                  counter("allreduce_bwd"),
                                  ts + "; Megatron f operator before column-parallel layers"));
  out.push_back(sp::exact_verdict(info.name, variant, p, "all-reduce bytes sent, all ranks", "B", pr.bytes_all_ranks,
                                  counter("allreduce_bytes_sent_all_ranks"),
                                  ts + "; ring: 2(t-1)/t x n h x 8 B per call and rank"));
  out.push_back(sp::exact_verdict(info.name, variant, p, "parameters per rank", "elements", pr.param_elems,
                                  counter("param_elems_max_rank"), ts + "; split weights / t, no biases"));
  std::string note = ts + "; counted tensors kept for backward";
  if (k == TpKind::layer) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "; 16-bit: %.0f B = Korthikanti %.0f B less layer norms (4sbh), dropout masks (2sbh + 3as^2b/t)",
                  2 * pr.stash_elems, pr.korthikanti_bytes);
    note += buf;
  }
  out.push_back(sp::exact_verdict(info.name, variant, p, "activations kept per rank", "elements", pr.stash_elems,
                                  counter("stash_elems_max_rank"), note));
  nn::append_gemm_rate_verdict(info, p, variant, tp_flops(k, sh) / t, m, true, out);
}

}  // namespace sp::mp
