// Composite blocks that factor one convolution into cheaper ones, each
// against the structure it replaces (same input and output shapes):
// stacked 3x3 vs 7x7 and vs 5x5 (VGG 2.3), 1x3 then 3x1 vs 3x3
// (Inception-v3 3), a 1x1 bottleneck around a 3x3, depthwise
// separable vs standard (MobileNet 3.1), group conv, the Ghost module
// (GhostNet 3.1). Closed forms: lightweight_models.hpp (docs/conv.md,
// "Lightweight convolution").
#include "scaleproof/registry.hpp"
#include "suites/conv/block_decl.hpp"

namespace {

using namespace sp::conv;
using namespace sp::conv::blocks;
using sp::Params;

bool B(const Params& p) { return p.i_or("bias", 0) != 0; }

// n stacked k x k layers, C -> C, relu between them (VGG).
Structure stack(int n, int k) {
  const std::string name = n == 1 ? "single" + std::to_string(k) + "x" + std::to_string(k)
                                  : "stacked" + std::to_string(k) + "x" + std::to_string(k);
  return {name,
          [n, k](const Params& p) {
            Net net = input(p);
            int x = 0;
            for (int i = 0; i < n; ++i)
              x = net.conv(x, layer(k, k, I(p, "C"), I(p, "C"), i + 1 < n ? Act::relu : Act::none, 1, B(p)));
            return net;
          },
          [n, k](const Params& p) {
            Prediction pr;
            pr.params = models::stacked_params(n, k, I(p, "C"), B(p));
            pr.macs = pixels(p) * models::stacked_params(n, k, I(p, "C"));
            pr.rf = models::receptive_field(n, k);
            return pr;
          }};
}

std::vector<sp::ParamSet> stack_sets() {
  auto s = shapes({{"bias", "1"}}, {{"bias", "0"}});
  s[0].params.set("bias", "0");  // both forms at conformance: 27 C^2 and, with biases, 3 (3*3+1) C
  return s;
}

// n stacked 3x3 vs one k x k with the same receptive field k = 1 + 2n.
Declaration stacked_vs_single(int n, int k) {
  const std::string ks = std::to_string(k);
  return block("block_stack" + ks,
               std::to_string(n) + " stacked 3x3 vs one " + ks + "x" + ks + " (same receptive field " + ks + ")",
               stack_sets(), stack(n, 3), stack(1, k),
               {[n, k](const Params& p) {
                  return models::stacked_params(1, k, I(p, "C"), B(p)) / models::stacked_params(n, 3, I(p, "C"), B(p));
                },
                std::to_string(k * k) + "C^2/" + std::to_string(9 * n) + "C^2 (VGG 2.3; with biases (" +
                    std::to_string(k * k) + "C+1)/(" + std::to_string(9 * n) + "C+" + std::to_string(n) + "))"},
               "docs/conv.md Lightweight convolution: VGG 2.3");
}

Declaration asym() {
  Structure blk{"1x3_3x1",
                [](const Params& p) {
                  Net net = input(p);
                  const int c = I(p, "C");
                  net.conv(net.conv(0, layer(1, 3, c, c)), layer(3, 1, c, c));
                  return net;
                },
                [](const Params& p) {
                  const double c = I(p, "C");
                  Prediction pr;
                  pr.params = models::asymmetric_ratio(3) * models::conv_params(3, 3, c, c);
                  pr.macs = pixels(p) * pr.params;
                  pr.rf = 3;
                  return pr;
                }};
  return block(
      "block_asym", "1x3 then 3x1 vs 3x3 (Inception-v3: saves 33%)", shapes({}, {}), blk, single("3x3", 3),
      {[](const Params&) { return 1 / models::asymmetric_ratio(3); }, "n^2/2n = 3/2, a 33% saving (Inception-v3 3)"},
      "docs/conv.md Lightweight convolution: Inception-v3 3");
}

Declaration bottleneck() {
  Structure blk{"bottleneck",
                [](const Params& p) {
                  Net net = input(p);
                  const int x = net.conv(0, layer(1, 1, I(p, "C"), I(p, "K"), Act::relu));
                  net.conv(x, layer(3, 3, I(p, "K"), I(p, "C")));
                  return net;
                },
                [](const Params& p) {
                  Prediction pr;
                  pr.params = models::bottleneck_params(I(p, "C"), I(p, "K"), I(p, "C"), 3);
                  pr.macs = pixels(p) * pr.params;
                  pr.rf = 3;
                  return pr;
                }};
  return block("block_bottleneck", "1x1 M->K then 3x3 K->N vs 3x3 M->N (M = N = C)",
               shapes({{"K", "3"}}, {{"K", "16"}}), blk, single("standard3x3", 3),
               {[](const Params& p) {
                  return models::conv_params(3, 3, I(p, "C"), I(p, "C")) /
                         models::bottleneck_params(I(p, "C"), I(p, "K"), I(p, "C"), 3);
                },
                "9MN/(MK + 9KN)"},
               "docs/conv.md Lightweight convolution: bottleneck");
}

Declaration separable() {
  Structure blk{"separable",
                [](const Params& p) {
                  Net net = input(p);
                  const int c = I(p, "C");
                  net.conv(net.conv(0, layer(3, 3, c, c, Act::relu, c)), layer(1, 1, c, c));
                  return net;
                },
                [](const Params& p) {
                  const double c = I(p, "C");
                  Prediction pr;
                  pr.params = models::separable_ratio(c, 3) * models::conv_params(3, 3, c, c);
                  pr.macs = pixels(p) * pr.params;
                  pr.rf = 3;
                  return pr;
                }};
  return block(
      "block_separable", "depthwise 3x3 + pointwise vs standard 3x3 (MobileNet)", shapes({}, {}), blk,
      single("standard3x3", 3),
      {[](const Params& p) { return 1 / models::separable_ratio(I(p, "C"), 3); }, "1/(1/N + 1/k^2) (MobileNet 3.1)"},
      "docs/conv.md Lightweight convolution: MobileNet 3.1");
}

Declaration group() {
  Structure blk{"grouped",
                [](const Params& p) {
                  Net net = input(p);
                  net.conv(0, layer(3, 3, I(p, "C"), I(p, "C"), Act::none, I(p, "g")));
                  return net;
                },
                [](const Params& p) {
                  Prediction pr;
                  pr.params = models::conv_params(3, 3, I(p, "C"), I(p, "C"), I(p, "g"));
                  pr.macs = pixels(p) * models::conv_macs_per_pixel(3, 3, I(p, "C"), I(p, "C"), I(p, "g"));
                  pr.rf = 3;
                  return pr;
                }};
  auto sets = shapes({{"g", "2"}}, {{"g", "2"}});
  for (const char* g : {"4", "8"}) {
    sets.push_back({sp::Size::small, sets[2].params});
    sets.back().params.set("g", g);
    sets.push_back({sp::Size::medium, sets[3].params});
    sets.back().params.set("g", g);
  }
  return block("block_group", "group conv 3x3 with g groups vs standard 3x3", sets, blk, single("standard3x3", 3),
               {[](const Params& p) { return double(p.i("g")); }, "g (docs/conv.md group conv row)"},
               "docs/conv.md Lightweight convolution: group conv");
}

// Ghost module: m = ceil(C/s) intrinsic maps by a k x k conv, (s-1) cheap
// d x d maps from each (groups = m), concatenated and truncated to C.
Declaration ghost() {
  Structure blk{"ghost",
                [](const Params& p) {
                  Net net = input(p);
                  const int c = I(p, "C"), s = I(p, "s"), d = I(p, "d");
                  const int m = static_cast<int>(models::ghost_intrinsic(c, s));
                  const int primary = net.conv(0, layer(3, 3, c, m, Act::relu));
                  const int cheap = net.conv(primary, layer(d, d, m, m * (s - 1), Act::relu, m));
                  net.concat({primary, cheap}, c);
                  return net;
                },
                [](const Params& p) {
                  const int c = I(p, "C"), s = I(p, "s"), d = I(p, "d");
                  Prediction pr;
                  pr.params = models::ghost_params(c, c, 3, s, d);
                  pr.macs = pixels(p) * pr.params;
                  if (d == 3) pr.rf = models::receptive_field(2, 3);
                  return pr;
                }};
  return block("block_ghost", "Ghost module (ratio s, cheap d x d) vs standard 3x3",
               shapes({{"s", "3"}, {"d", "3"}}, {{"s", "2"}, {"d", "3"}}), blk, single("standard3x3", 3),
               {[](const Params& p) { return models::ghost_speedup(I(p, "C"), 3, I(p, "s"), I(p, "d")); },
                "r_s = ck^2/((1/s)ck^2 + ((s-1)/s)d^2) ~ s (GhostNet 3.1; exact when s divides C)"},
               "docs/conv.md Lightweight convolution: GhostNet 3.1");
}

SP_REGISTER_TECHNIQUE(ConvTechnique<float>, stacked_vs_single(3, 7));
SP_REGISTER_TECHNIQUE(ConvTechnique<float>, stacked_vs_single(2, 5));
SP_REGISTER_TECHNIQUE(ConvTechnique<float>, asym());
SP_REGISTER_TECHNIQUE(ConvTechnique<float>, bottleneck());
SP_REGISTER_TECHNIQUE(ConvTechnique<float>, separable());
SP_REGISTER_TECHNIQUE(ConvTechnique<float>, group());
SP_REGISTER_TECHNIQUE(ConvTechnique<float>, ghost());

}  // namespace
