// Composite blocks that change how layers connect, each against a plain
// structure with the same input and output shapes: the residual add
// (ResNet), dense concatenation (DenseNet), parallel 1x1/3x3/5x5 branches
// concatenated (Inception: multi-size kernels at one depth) and
// squeeze-and-excitation channel weighting (SE). Parameter closed forms are
// sums of the standard-conv row of docs/conv.md ("Lightweight convolution").
#include <array>

#include "scaleproof/registry.hpp"
#include "suites/conv/block_decl.hpp"

namespace {

using namespace sp::conv;
using namespace sp::conv::blocks;
using sp::Params;

// Two 3x3 C -> C layers; with the skip, relu(x + F(x)) (ResNet basic block).
Structure two_layers(bool skip) {
  return {skip ? "residual" : "plain",
          [skip](const Params& p) {
            Net net = input(p);
            const int c = I(p, "C");
            const int y =
                net.conv(net.conv(0, layer(3, 3, c, c, Act::relu)), layer(3, 3, c, c, skip ? Act::none : Act::relu));
            if (skip) net.add(0, y, Act::relu);
            return net;
          },
          [](const Params& p) {
            Prediction pr;
            pr.params = models::stacked_params(2, 3, I(p, "C"));
            pr.macs = pixels(p) * pr.params;
            pr.rf = models::receptive_field(2, 3);
            return pr;
          }};
}

Declaration residual() {
  return block("block_residual", "ResNet basic block (two 3x3 + identity add) vs the same layers without the skip",
               shapes({}, {}), two_layers(true), two_layers(false),
               {[](const Params&) { return 1.0; }, "1: the skip adds no parameters (ResNet)"},
               "docs/conv.md Lightweight convolution (standard conv row); ResNet");
}

// Dense block of two layers with growth rate G: out = [x, y1, y2] (C + 2G channels).
Declaration dense() {
  Structure blk{"dense",
                [](const Params& p) {
                  Net net = input(p);
                  const int c = I(p, "C"), g = I(p, "G");
                  const int y1 = net.conv(0, layer(3, 3, c, g, Act::relu));
                  const int c1 = net.concat({0, y1});
                  const int y2 = net.conv(c1, layer(3, 3, c + g, g, Act::relu));
                  net.concat({c1, y2});
                  return net;
                },
                [](const Params& p) {
                  const double c = I(p, "C"), g = I(p, "G");
                  Prediction pr;
                  pr.params = models::conv_params(3, 3, c, g) + models::conv_params(3, 3, c + g, g);
                  pr.macs = pixels(p) * pr.params;
                  pr.rf = models::receptive_field(2, 3);
                  return pr;
                }};
  Structure old{"plain_wide",
                [](const Params& p) {
                  Net net = input(p);
                  const int c = I(p, "C"), g = I(p, "G");
                  net.conv(net.conv(0, layer(3, 3, c, c + g, Act::relu)), layer(3, 3, c + g, c + 2 * g, Act::relu));
                  return net;
                },
                [](const Params& p) {
                  const double c = I(p, "C"), g = I(p, "G");
                  Prediction pr;
                  pr.params = models::conv_params(3, 3, c, c + g) + models::conv_params(3, 3, c + g, c + 2 * g);
                  pr.macs = pixels(p) * pr.params;
                  pr.rf = models::receptive_field(2, 3);
                  return pr;
                }};
  return block("block_dense", "DenseNet block (2 layers, growth G, concatenation) vs two plain 3x3 to C+2G",
               shapes({{"G", "3"}}, {{"G", "32"}}), blk, old,
               {[](const Params& p) {
                  const double c = I(p, "C"), g = I(p, "G");
                  return (c * (c + g) + (c + g) * (c + 2 * g)) / (c * g + (c + g) * g);
                },
                "(C(C+G) + (C+G)(C+2G)) / (CG + (C+G)G)"},
               "docs/conv.md Lightweight convolution (standard conv row); DenseNet");
}

// Parallel 1x1, 3x3 and 5x5 branches from the same input, C/4 + C/2 + C/4 channels.
Declaration inception() {
  auto widths = [](const Params& p) {
    const int c = I(p, "C");
    return std::array<int, 3>{c / 4, c / 2, c - c / 4 - c / 2};
  };
  Structure blk{"inception",
                [widths](const Params& p) {
                  Net net = input(p);
                  const int c = I(p, "C");
                  const auto w = widths(p);
                  const int a = net.conv(0, layer(1, 1, c, w[0], Act::relu));
                  const int b = net.conv(0, layer(3, 3, c, w[1], Act::relu));
                  const int e = net.conv(0, layer(5, 5, c, w[2], Act::relu));
                  net.concat({a, b, e});
                  return net;
                },
                [widths](const Params& p) {
                  const double c = I(p, "C");
                  const auto w = widths(p);
                  Prediction pr;
                  pr.params = models::conv_params(1, 1, c, w[0]) + models::conv_params(3, 3, c, w[1]) +
                              models::conv_params(5, 5, c, w[2]);
                  pr.macs = pixels(p) * pr.params;
                  pr.rf = 5;  // the widest branch
                  return pr;
                }};
  return block("block_inception", "parallel 1x1/3x3/5x5 branches concatenated vs one 5x5 (same field)", shapes({}, {}),
               blk, single("single5x5", 5, "C", Act::relu),
               {[widths](const Params& p) {
                  const double c = I(p, "C");
                  const auto w = widths(p);
                  return 25 * c * c / (c * w[0] + 9 * c * w[1] + 25 * c * w[2]);
                },
                "25C^2 / C(a + 9b + 25c)"},
               "docs/conv.md Lightweight convolution (standard conv row); Inception");
}

// 3x3 conv, then SE: global mean -> 1x1 C->C/r (relu) -> 1x1 C/r->C (sigmoid) -> scale.
Structure se(bool with_se) {
  return {with_se ? "conv_se" : "conv",
          [with_se](const Params& p) {
            Net net = input(p);
            const int c = I(p, "C"), cr = std::max(1, c / I(p, "r"));
            const int x = net.conv(0, layer(3, 3, c, c, Act::relu));
            if (!with_se) return net;
            const int z = net.conv(net.conv(net.pool(x), layer(1, 1, c, cr, Act::relu, 1, true)),
                                   layer(1, 1, cr, c, Act::sigmoid, 1, true));
            net.scale(x, z);
            return net;
          },
          [with_se](const Params& p) {
            const double c = I(p, "C"), cr = std::max(1, I(p, "C") / I(p, "r"));
            Prediction pr;
            pr.params = models::conv_params(3, 3, c, c);
            pr.macs = pixels(p) * pr.params;
            if (with_se) {  // SE adds 2 C^2 / r weights and C/r + C biases (Hu et al. 2018)
              pr.params += models::conv_params(1, 1, c, cr, 1, true) + models::conv_params(1, 1, cr, c, 1, true);
              pr.macs += double(p.i("N")) * 2 * c * cr;
            }
            pr.rf = with_se ? 0 : 3;  // SE makes every output depend on the whole plane
            return pr;
          }};
}

Declaration squeeze_excite() {
  return block("block_se", "3x3 conv + squeeze-and-excitation (reduction r) vs the 3x3 conv alone",
               shapes({{"r", "2"}}, {{"r", "16"}}), se(true), se(false),
               {[](const Params& p) {
                  const double c = I(p, "C"), cr = std::max(1, I(p, "C") / I(p, "r"));
                  return 9 * c * c / (9 * c * c + 2 * c * cr + cr + c);
                },
                "9C^2 / (9C^2 + 2C^2/r + C/r + C)"},
               "docs/conv.md Lightweight convolution (standard conv row); SE (Hu et al. 2018)");
}

SP_REGISTER_TECHNIQUE(ConvTechnique<float>, residual());
SP_REGISTER_TECHNIQUE(ConvTechnique<float>, dense());
SP_REGISTER_TECHNIQUE(ConvTechnique<float>, inception());
SP_REGISTER_TECHNIQUE(ConvTechnique<float>, squeeze_excite());

}  // namespace
