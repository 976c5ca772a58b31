#pragma once
// What the tensor-parallel techniques share: shapes and their rules, the full
// input tensors, the check against the single-rank reference and the
// predictions (all-reduce counts and bytes, memory per rank).
#include <map>
#include <string>
#include <vector>

#include "kernels/modelparallel/dense.hpp"
#include "kernels/nn/gemm_rate.hpp"
#include "scaleproof/technique.hpp"

namespace sp::mp {

enum class TpKind { column, row, mlp, attention, layer };
std::string tp_name(TpKind k);
std::string tp_summary(TpKind k);

struct TpShape {
  int b = 1, s = 1, h = 1, heads = 1, ffn = 1;
  int n() const { return b * s; }  // tokens (rows)
  static TpShape from(const Params& p);
};
Params tp_params(TpKind k, int b, int s, int h, int heads, int ffn);
// One-line InputError when t does not divide what it must split.
void tp_check_shape(TpKind k, const TpShape& sh, int t);
double tp_flops(TpKind k, const TpShape& sh);
// The products one call makes on each of t ranks (the fraction-of-GEMM-rate verdict).
std::vector<nn::GemmShape> tp_gemm_shapes(TpKind k, const TpShape& sh, int t);

// The full (unsplit) tensors every rank generates identically.
struct TpData {
  std::map<std::string, std::vector<double>> host;
  std::map<std::string, std::pair<int, int>> dims;
  static TpData make(TpKind k, const TpShape& sh);
  Mat view(const std::string& name) const;
};

struct TpOutputs {
  CMat y, dx;
  std::vector<CMat> grads;  // weight-gradient shards, in the layer's order
};
CheckResult tp_check(TpKind k, const TpShape& sh, const TpData& d, int rank, int t, const TpOutputs& got);

// Predictions per call (at t ranks).
struct TpPrediction {
  int allreduce_fwd, allreduce_bwd;
  double bytes_all_ranks;    // ring all-reduce bytes sent, summed over ranks
  double param_elems;        // per rank
  double stash_elems;        // activations kept for the backward, per rank
  double korthikanti_bytes;  // Korthikanti et al. Table 2 (16-bit, with layer norms and dropout), layer only
};
TpPrediction tp_predict(TpKind k, const TpShape& sh, int t);
void tp_verdicts(const Info& info, TpKind k, const Params& p, const std::string& variant, const Measurement& m,
                 std::vector<Verdict>& out);

}  // namespace sp::mp
