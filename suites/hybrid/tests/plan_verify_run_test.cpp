// The verification's run path end to end on a stand-in for the composed step
// (a test-only technique taking hybrid_step's parameters, doing no training):
// the machine measured through step_gemm and all_reduce, the picked layouts run
// through the registry and the runner, and each one's measurement matched
// back to its layout. Needs 2 ranks (CTest runs it under mpiexec -n 2);
// skipped at 1. Times are not asserted, only that every layout was measured.
#include <gtest/gtest.h>

#include <cmath>

#include "scaleproof/comm.hpp"
#include "scaleproof/registry.hpp"
#include "suites/hybrid/plan_verify.hpp"

namespace {

using namespace sp::hybrid;

constexpr const char* kStandIn = "plan_test_step";

sp::Params params_of(const ModelShape& m, const Layout& l) {
  sp::Params p;
  p.set("layers", m.layers).set("hidden", m.hidden).set("heads", m.heads).set("seq", m.seq);
  p.set("batch", m.global_batch).set("dp", l.dp).set("tp", l.tp).set("pp", l.pp).set("v", l.v);
  p.set("mb", l.micro_batches).set("schedule", sp::mp::to_string(l.schedule)).set("zero", l.zero_stage);
  p.set("storage", to_string(l.storage)).set("ckpt", l.ckpt_every).set("steps", 1);
  return p;
}

class StandInStep : public sp::Technique {
 public:
  StandInStep() : Technique(make_info()) {}
  static sp::Info make_info() {
    sp::Info i;
    i.name = kStandIn;
    i.family = "hybrid";
    i.summary = "test only: hybrid_step's parameters, one barrier per call";
    Layout l;
    l.dp = 2;
    i.param_sets = {{sp::Size::small, params_of(plan::scale_down(2), l)}};
    i.param_rules = {{"zero", 0, 3}, {"ckpt", 0, 1e6}};
    i.variants = {sp::Variant::kernel("kokkos")};
    i.ranks = {2, 1 << 20, false};
    i.test_only = true;
    return i;
  }
  void validate(const sp::Params& p, int nranks) const override {
    Technique::validate(p, nranks);
    const std::string err = layout_error(model(p), layout(p), nranks);
    if (!err.empty()) throw sp::InputError(err);
  }
  sp::Counts counts(const sp::Params&, int) const override { return {}; }
  void setup(const sp::Params&, int) override {}
  void run(const std::string&) override { sp::comm::barrier(); }
  sp::CheckResult check(const std::string&) override {
    sp::CheckResult r;
    r.checked = 1;
    return r;
  }

 private:
  static ModelShape model(const sp::Params& p) {
    ModelShape m;
    m.layers = static_cast<int>(p.i("layers")), m.hidden = static_cast<int>(p.i("hidden"));
    m.heads = static_cast<int>(p.i("heads")), m.seq = static_cast<int>(p.i("seq"));
    m.global_batch = static_cast<int>(p.i("batch"));
    return m;
  }
  static Layout layout(const sp::Params& p) {
    Layout l;
    l.dp = static_cast<int>(p.i("dp")), l.tp = static_cast<int>(p.i("tp")), l.pp = static_cast<int>(p.i("pp"));
    l.v = static_cast<int>(p.i("v")), l.micro_batches = static_cast<int>(p.i("mb"));
    l.schedule = sp::mp::parse_schedule(p.s("schedule"));
    l.zero_stage = static_cast<int>(p.i("zero")), l.storage = parse_storage(p.s("storage"));
    l.ckpt_every = static_cast<int>(p.i("ckpt"));
    return l;
  }
};

SP_REGISTER_TECHNIQUE(StandInStep);

TEST(PlanVerifyRun, EveryPickedLayoutIsMeasuredThroughTheRunner) {
  if (sp::comm::size() < 2) GTEST_SKIP() << "needs 2 ranks (mpiexec -n 2)";
  const plan::VerifyResult v = plan::verify(2, StorageType::fp32, 0.001, kStandIn);
  EXPECT_GT(v.machine.gemm_flops, 0.0);
  EXPECT_GT(v.machine.tp.beta, 0.0);
  EXPECT_EQ(v.model.hidden, plan::scale_down(sp::comm::size()).hidden);
  ASSERT_GE(v.rows.size(), 2u);
  for (size_t i = 1; i < v.rows.size(); ++i) EXPECT_LT(v.rows[i - 1].position, v.rows[i].position);
  EXPECT_EQ(v.rows.front().position, 0);
  if (sp::comm::rank() != 0) return;  // measurements are read back on rank 0
  for (const auto& r : v.rows) EXPECT_GT(r.measured, 0.0) << plan::describe(r.planned.layout);
  EXPECT_TRUE(std::isfinite(v.mae));
}

}  // namespace
