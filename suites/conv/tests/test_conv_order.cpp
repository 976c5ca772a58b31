// A block's verdicts must not depend on the order its variants run in: the
// time ratio of the replaced structure over the block, and the kernel's
// throughput against the vendor baseline, are probes the measurement
// service times itself, not leftovers of an earlier variant.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "measure_case.hpp"
#include "models.hpp"
#include "scaleproof/registry.hpp"
#include "suites/conv/conv_technique.hpp"

namespace {

using Counters = std::map<std::string, std::map<std::string, double>>;  // by variant

// Each variant in `order`: two calls (the runner's loop), its counters, its probes.
Counters run_in_order(const sp::Registered& r, const sp::Params& p, const std::vector<std::string>& order) {
  auto t = r.make();
  t->setup(p, 1);
  Counters out;
  for (auto& v : order) {
    t->run(v);
    t->run(v);
    t->report_counters(v, out[v]);
    sp::run_probes(*t, v, out[v]);
  }
  t->teardown();
  return out;
}

std::vector<std::string> verdict_inputs(const sp::Registered& r, const sp::Params& p, const std::string& v,
                                        const std::map<std::string, double>& counters) {
  sp::Measurement m;
  m.seconds = 1e-3;  // the same for both orders: only the counters differ
  m.counters = counters;
  std::vector<sp::Verdict> vs;
  r.make()->predict(p, v, m, sp::Machine{}, vs);
  std::vector<std::string> rows;
  for (auto& x : vs) rows.push_back(x.quantity + " predicted " + std::to_string(x.predicted));
  return rows;
}

TEST(ConvOrder, BlockVerdictInputsDoNotDependOnVariantOrder) {
  const sp::Registered* r = sp::Registry::get().find("block_group");
  ASSERT_NE(r, nullptr);
  const sp::Params p = r->info.param_sets.front().params;
  const std::string block = r->info.variants[0].name, replaced = r->info.variants[1].name;
  const Counters ab = run_in_order(*r, p, {block, replaced});
  const Counters ba = run_in_order(*r, p, {replaced, block});
  for (const std::string& v : {block, replaced}) {
    ASSERT_EQ(ab.at(v).size(), ba.at(v).size()) << v;
    for (auto& [k, x] : ab.at(v)) {
      ASSERT_TRUE(ba.at(v).count(k)) << v << " " << k;
      if (k != sp::conv::kTimeRatio && k.rfind(sp::kPairedVsBaseline, 0) != 0)  // timings
        EXPECT_EQ(x, ba.at(v).at(k)) << v << " " << k;                          // counts: bitwise
    }
    EXPECT_EQ(verdict_inputs(*r, p, v, ab.at(v)), verdict_inputs(*r, p, v, ba.at(v))) << v;
  }
  // The ratio belongs to the replaced structure, whichever ran first.
  EXPECT_GT(ab.at(replaced).at(sp::conv::kTimeRatio), 0);
  EXPECT_GT(ba.at(replaced).at(sp::conv::kTimeRatio), 0);
  EXPECT_EQ(ab.at(block).count(sp::conv::kTimeRatio), 0u);
  bool has_time_ratio = false;
  for (auto& row : verdict_inputs(*r, p, replaced, ba.at(replaced)))
    has_time_ratio = has_time_ratio || row.rfind("time ratio", 0) == 0;
  EXPECT_TRUE(has_time_ratio);
}

// The throughput verdict against oneDNN comes from the two calls timed in
// turn inside the kernel's case (the baseline need not have run), and only
// the kernel's case carries it.
TEST(ConvOrder, ThroughputVsBaselineIsTimedInTurnInTheKernelsCase) {
  int judged = 0;
  for (const char* name : {"conv2d", "conv_pointwise", "conv_depthwise", "conv_im2col"}) {
    const sp::Registered* r = sp::Registry::get().find(name);
    ASSERT_NE(r, nullptr) << name;
    if (r->info.baseline.empty()) continue;  // a build without the vendor library
    const sp::Params p = r->info.param_sets.front().params;
    const std::string kernel = r->info.main_variant(), vendor = r->info.baseline;
    const Counters c = run_in_order(*r, p, {kernel, vendor});
    ASSERT_TRUE(c.at(kernel).count(sp::kPairedVsBaseline)) << name;
    EXPECT_GT(c.at(kernel).at(sp::kPairedVsBaseline), 0) << name;
    // oneDNN on plain tensors is timed in the same turns; the counter is the faster of the two.
    ASSERT_EQ(r->info.baseline_alternatives, std::vector<std::string>{vendor + "_plain"}) << name;
    const std::string each = std::string(sp::kPairedVsBaseline) + ".";
    ASSERT_TRUE(c.at(kernel).count(each + vendor) && c.at(kernel).count(each + vendor + "_plain")) << name;
    EXPECT_EQ(c.at(kernel).at(sp::kPairedVsBaseline),
              std::min(c.at(kernel).at(each + vendor), c.at(kernel).at(each + vendor + "_plain")))
        << name;
    EXPECT_EQ(c.at(vendor).count(sp::kPairedVsBaseline), 0u) << name;
    sp::MeasuredCase k;
    k.technique = name, k.variant = kernel, k.params = p.label();
    k.m.seconds = 1.0;  // separate loops' ratio 0.5: the verdict must not use it
    k.m.counters = c.at(kernel);
    sp::MeasuredCase v = k;
    v.variant = vendor, v.m.seconds = 0.5, v.m.counters = c.at(vendor);
    for (const sp::Verdict& x : sp::judge({k, v}, sp::Machine{}))
      if (x.quantity == "throughput vs " + vendor) {
        EXPECT_EQ(x.measured, c.at(kernel).at(sp::kPairedVsBaseline)) << name;
        EXPECT_NE(x.note.find("calls timed in turn"), std::string::npos) << name;
        ++judged;
      }
  }
#ifdef SP_HAVE_ONEDNN
  EXPECT_EQ(judged, 4);
#endif
}

// Without calls timed in turn, the verdict takes the fastest of oneDNN's
// two layouts from their own loops, and names it.
TEST(ConvOrder, ThroughputVsBaselineTakesTheLibrarysFastestLayout) {
  const sp::Registered* r = sp::Registry::get().find("conv_pointwise");
  ASSERT_NE(r, nullptr);
  if (r->info.baseline.empty()) GTEST_SKIP() << "a build without the vendor library";
  const std::string vendor = r->info.baseline;
  auto verdict = [&](double any_s, double plain_s) {
    sp::MeasuredCase k;
    k.technique = "conv_pointwise", k.variant = r->info.main_variant();
    k.params = r->info.param_sets.front().params.label();
    k.m.seconds = 1.0;
    sp::MeasuredCase a = k, b = k;
    a.variant = vendor, a.m.seconds = any_s;
    b.variant = vendor + "_plain", b.m.seconds = plain_s;
    for (const sp::Verdict& x : sp::judge({k, a, b}, sp::Machine{}))
      if (x.quantity == "throughput vs " + vendor) return x;
    return sp::Verdict{};
  };
  const sp::Verdict plain_faster = verdict(0.95, 0.8), any_faster = verdict(0.7, 0.8);
  EXPECT_DOUBLE_EQ(plain_faster.ratio, 0.8);
  EXPECT_EQ(plain_faster.status, sp::Status::fail);  // >= 0.9 of the faster layout
  EXPECT_EQ(plain_faster.note.rfind("80.0% of " + vendor + "_plain", 0), 0u) << plain_faster.note;
  EXPECT_DOUBLE_EQ(any_faster.ratio, 0.7);
  EXPECT_EQ(any_faster.note.rfind("70.0% of " + vendor + " ", 0), 0u) << any_faster.note;
  EXPECT_NE(any_faster.note.find("the fastest of"), std::string::npos);
}

}  // namespace
