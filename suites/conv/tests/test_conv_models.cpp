// The closed forms of docs/conv.md ("Lightweight convolution") against counts
// taken from built layers, and receptive fields composed layer by layer.
#include <gtest/gtest.h>

#include "scaleproof/registry.hpp"
#include "suites/conv/conv_net.hpp"
#include "suites/conv/lightweight_models.hpp"

namespace {

using namespace sp::conv;

ConvSpec same3(int cin, int cout, int stride = 1) {
  ConvSpec s;
  s.c_in = cin, s.c_out = cout, s.kh = s.kw = 3, s.pad_h = s.pad_w = 1, s.stride = stride;
  return s;
}

TEST(ConvModels, ReceptiveFieldOfStackedLayersIsOnePlusNTimesKMinusOne) {
  for (int n = 1; n <= 4; ++n) {
    Net net(1, 4, 40, 40);
    int x = 0;
    for (int i = 0; i < n; ++i) x = net.conv(x, same3(4, 4));
    EXPECT_EQ(net.out().rf_h, models::receptive_field(n, 3));
    EXPECT_EQ(net.out().rf_w, models::receptive_field(n, 3));
  }
}

TEST(ConvModels, StrideWidensTheFieldOfLaterLayers) {
  Net net(1, 4, 40, 40);
  net.conv(net.conv(0, same3(4, 4, 2)), same3(4, 4));
  EXPECT_EQ(net.out().rf_h, 1 + 2 + 2 * 2);  // the second layer's taps are 2 input pixels apart
}

TEST(ConvModels, BranchesTakeTheWidestField) {
  Net net(1, 4, 20, 20);
  ConvSpec five = same3(4, 2);
  five.kh = five.kw = 5, five.pad_h = five.pad_w = 2;
  net.concat({net.conv(0, same3(4, 2)), net.conv(0, five)});
  EXPECT_EQ(net.out().rf_h, 5);
  EXPECT_EQ(net.out().c, 4);
}

TEST(ConvModels, VggNumbers) {
  const double c = 64;
  EXPECT_EQ(models::stacked_params(3, 3, c), 27 * c * c);
  EXPECT_EQ(models::stacked_params(1, 7, c), 49 * c * c);
  EXPECT_EQ(models::stacked_params(3, 3, c, true), 3 * (3 * 3 * c + 1) * c);  // with biases
  EXPECT_NEAR(1 - models::asymmetric_ratio(3), 1.0 / 3, 1e-15);               // Inception-v3: 33% saved
}

TEST(ConvModels, GhostRatioIsExactWhenSDividesC) {
  // standard / ghost parameters = r_s when m = C/s exactly (GhostNet eq. 4 with c = C_in).
  for (int s : {2, 3, 4}) {
    const double c = 48;
    EXPECT_NEAR(models::conv_params(3, 3, c, c) / models::ghost_params(c, c, 3, s, 3),
                models::ghost_speedup(c, 3, s, 3), 1e-12);
    EXPECT_NEAR(models::ghost_speedup(c, 3, s, 3), s, 0.1 * s);
  }
}

// Each conv technique, set up at each conformance shape: the
// parameters allocated for every variant must equal the closed form
// (verdict PASS), and a counter off by one must turn the verdict to FAIL.
TEST(ConvModels, AllocatedParametersMatchTheClosedFormsOfEveryBlock) {
  int blocks = 0;
  for (auto& r : sp::Registry::get().all()) {
    if (r.info.family != "conv") continue;
    blocks += r.info.name.rfind("block_", 0) == 0;
    for (auto& ps : r.info.param_sets) {
      if (ps.size != sp::Size::conformance) continue;
      auto t = r.make();
      t->setup(ps.params, 1);
      for (auto& v : t->available_variants()) {
        t->run(v);
        sp::Measurement m;
        m.seconds = 1;
        t->report_counters(v, m.counters);
        std::vector<sp::Verdict> out;
        t->predict(ps.params, v, m, sp::Machine{}, out);
        for (auto& verdict : out)
          if (verdict.status != sp::Status::info)
            EXPECT_EQ(verdict.status, sp::Status::pass)
                << r.info.name << " " << v << " " << verdict.quantity << " " << ps.params.label();
        m.counters["params"] += 1;
        out.clear();
        t->predict(ps.params, v, m, sp::Machine{}, out);
        bool caught = false;
        for (auto& verdict : out)
          caught = caught || (verdict.quantity == "parameters" && verdict.status == sp::Status::fail);
        if (v.find("onednn") == std::string::npos) EXPECT_TRUE(caught) << r.info.name << " " << v;
      }
      t->teardown();
    }
  }
  EXPECT_EQ(blocks, 11);
}

}  // namespace
