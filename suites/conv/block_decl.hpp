#pragma once
// Shared shape of a composite-block technique: the block and the structure
// it replaces, both on the project's direct kernel and both again with
// oneDNN doing the convolutions in the layout it chooses (the vendor
// baseline), and the block once more with oneDNN on plain NCHW tensors, all
// in one run on the same input. Parameter sets follow one pattern: tiny odd shapes for
// conformance (batch 1 and 2), ResNet-stage shapes for benchmarks.
#include <string>
#include <vector>

#include "suites/conv/conv_technique.hpp"
#include "suites/conv/lightweight_models.hpp"

namespace sp::conv::blocks {

struct Structure {
  std::string name;
  std::function<Net(const Params&)> build;
  std::function<Prediction(const Params&)> predict;
};

inline ConvSpec layer(int kh, int kw, int cin, int cout, Act act = Act::none, int groups = 1, bool bias = false) {
  ConvSpec s;
  s.kh = kh, s.kw = kw, s.c_in = cin, s.c_out = cout, s.groups = groups, s.bias = bias, s.act = act;
  s.pad_h = (kh - 1) / 2, s.pad_w = (kw - 1) / 2;  // "same" for odd kernels at stride 1
  return s;
}

inline int I(const Params& p, const char* k) { return static_cast<int>(p.i(k)); }
inline Net input(const Params& p) { return Net(I(p, "N"), I(p, "C"), I(p, "H"), I(p, "W")); }
inline double pixels(const Params& p) { return double(p.i("N")) * p.i("H") * p.i("W"); }

// N, C, H, W plus the block's own keys, at every size.
inline std::vector<ParamSet> shapes(const std::vector<std::pair<std::string, std::string>>& extra_conf,
                                    const std::vector<std::pair<std::string, std::string>>& extra) {
  auto p = [](int n, int c, int h, int w, const std::vector<std::pair<std::string, std::string>>& e) {
    Params q{{"N", std::to_string(n)}, {"C", std::to_string(c)}, {"H", std::to_string(h)}, {"W", std::to_string(w)}};
    for (auto& [k, v] : e) q.set(k, v);
    return q;
  };
  return {{Size::conformance, p(1, 6, 7, 9, extra_conf)},
          {Size::conformance, p(2, 8, 9, 19, extra_conf)},
          {Size::small, p(2, 32, 28, 28, extra)},
          {Size::medium, p(8, 64, 56, 56, extra)},
          {Size::large, p(32, 64, 56, 56, extra)}};
}

// One k x k conv C -> C_out (C_out from the key cout_key): the structure most blocks replace.
inline Structure single(const std::string& name, int k, const char* cout_key = "C", Act act = Act::none) {
  return {name,
          [=](const Params& p) {
            Net net = input(p);
            net.conv(0, layer(k, k, I(p, "C"), I(p, cout_key), act));
            return net;
          },
          [=](const Params& p) {
            Prediction pr;
            pr.params = models::conv_params(k, k, I(p, "C"), I(p, cout_key));
            pr.macs = pixels(p) * pr.params;
            pr.rf = models::receptive_field(1, k);
            return pr;
          }};
}

inline Declaration block(const std::string& name, const std::string& summary, std::vector<ParamSet> sets,
                         const Structure& blk, const Structure& old, BlockRatio ratio, const std::string& source) {
  Declaration d;
  d.info.name = name;
  d.info.family = "conv";
  d.info.summary = summary;
  d.info.param_sets = std::move(sets);
  d.info.param_rules = {{"bias", 0, 1}};
  d.info.source = source;
  // Same vendor target as the primitive convolutions: the project's block at
  // >= 50% of the same block with oneDNN convolutions.
  d.info.tol.min_vs_baseline = 0.5;
  d.defs.push_back({blk.name, Backend::direct, blk.name, blk.build, blk.predict});
  d.defs.push_back({old.name, Backend::direct, old.name, old.build, old.predict});
  d.defs.push_back({blk.name + "_onednn", Backend::onednn, blk.name, blk.build, blk.predict});
  d.defs.push_back({old.name + "_onednn", Backend::onednn, old.name, old.build, old.predict});
  d.defs.push_back({blk.name + "_onednn_plain", Backend::onednn_plain, blk.name, blk.build, blk.predict});
  d.baseline_def = blk.name + "_onednn";
  d.ratio = std::move(ratio);
  return d;
}

}  // namespace sp::conv::blocks
