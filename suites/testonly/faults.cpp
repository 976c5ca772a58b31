// hang and exit_early (test-only): a rank that never returns from run() or
// that exits in the middle of a launch, chosen with on_rank (-1: none, the
// default, so conformance runs them as ordinary collective techniques). They
// exercise the watchdog of `scaleproof scale` and `scaleproof qualify`.
#include <unistd.h>

#include <cstdlib>

#include "scaleproof/comm.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/registry.hpp"

namespace {

enum class Fault { hang, exit_early };

class FaultTech : public sp::Technique {
 public:
  explicit FaultTech(Fault f) : Technique(describe(f)), fault_(f) {}

  static sp::Info describe(Fault f) {
    sp::Info i;
    i.name = f == Fault::hang ? "hang" : "exit_early";
    i.family = "testonly";
    i.summary = f == Fault::hang ? "test-only: rank on_rank never returns from run()"
                                 : "test-only: rank on_rank exits (code 3) inside run()";
    i.param_sets = {{sp::Size::conformance, {{"on_rank", "-1"}, {"n", "1"}}},
                    {sp::Size::small, {{"on_rank", "-1"}, {"n", "1"}}}};
    i.param_rules = {{"on_rank", -1, 1 << 30}};
    i.variants = {sp::Variant::kernel("kokkos")};
    i.ranks = {1, 1 << 30, false};
    i.weak_scale_param = "n";
    i.test_only = true;
    return i;
  }

  void validate(const sp::Params& p, int nranks) const override {
    if (p.i("on_rank") < -1) throw sp::InputError(info_.name + ": on_rank must be -1 (none) or a rank");
    if (p.i("n") <= 0) throw sp::InputError(info_.name + ": n must be > 0");
    if (!info_.ranks.accepts(nranks))
      throw sp::InputError(info_.name + " cannot use " + std::to_string(nranks) + " rank(s)");
  }

  sp::Counts counts(const sp::Params&, int) const override { return {}; }

  void setup(const sp::Params& p, int) override { on_rank_ = p.i("on_rank"); }

  void run(const std::string&) override {
    if (sp::comm::rank() == on_rank_) {
      if (fault_ == Fault::exit_early) std::_Exit(3);  // no MPI_Finalize: the launcher must notice
      for (;;) sleep(1);                               // only the watchdog ends this
    }
    rank_sum_ = sp::comm::sum(static_cast<long long>(sp::comm::rank()));
  }

  sp::CheckResult check(const std::string&) override {
    // The collective in run() must have seen every rank: sum of 0..N-1.
    const long long n = sp::comm::size();
    sp::Comparator cmp("exact: sum of rank ids = N(N-1)/2");
    cmp.add(static_cast<double>(rank_sum_), static_cast<double>(n * (n - 1) / 2), 0);
    return cmp.result();
  }

 private:
  Fault fault_;
  long long on_rank_ = -1, rank_sum_ = -1;
};

SP_REGISTER_TECHNIQUE(FaultTech, Fault::hang);
SP_REGISTER_TECHNIQUE(FaultTech, Fault::exit_early);

}  // namespace
