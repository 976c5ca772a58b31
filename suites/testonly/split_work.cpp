// split_work (test-only): a known serial part plus a fixed amount of parallel
// work split over ranks and, within a rank, over Kokkos threads. Its time is
// T(N) = T_s + T_p / N by construction, so `scaleproof scale` can be checked
// against a law whose parallel fraction is known (docs/SCALING.md,
// "Scaling laws"). Each work unit is an integer LCG chain: exact, so the
// check compares bit for bit.
//
// SP_TESTONLY_SLOWDOWN=K (an integer, 1 to 1000; default 1) multiplies the
// steps of every unit by K: the same case, K times the work, so that a
// deliberately slowed run can be judged against references and the history
// gate (docs/HISTORY.md). Its check stays exact.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "scaleproof/comm.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/registry.hpp"

namespace {

// One unit: `steps` dependent LCG steps (Knuth's MMIX constants) seeded by the
// unit index. Dependent steps make the cost per unit fixed and unvectorisable.
KOKKOS_INLINE_FUNCTION uint64_t unit(uint64_t u, int steps) {
  uint64_t x = u * 0x9E3779B97F4A7C15ULL + 1;
  for (int s = 0; s < steps; ++s) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

// The factor of SP_TESTONLY_SLOWDOWN (1 when unset); anything but an integer in 1..1000 is bad input.
int slowdown() {
  const char* env = std::getenv("SP_TESTONLY_SLOWDOWN");
  if (!env || !*env) return 1;
  char* end = nullptr;
  const long k = std::strtol(env, &end, 10);
  if (*end || k < 1 || k > 1000)
    throw sp::InputError(std::string("SP_TESTONLY_SLOWDOWN '") + env + "': expected an integer from 1 to 1000");
  return static_cast<int>(k);
}

class SplitWork : public sp::Technique {
 public:
  SplitWork() : Technique(describe()) {}

  static sp::Info describe() {
    sp::Info i;
    i.name = "split_work";
    i.family = "testonly";
    i.summary = "test-only: serial units + parallel units split over ranks and threads";
    auto p = [](int work, int serial) {
      return sp::Params{{"work", std::to_string(work)}, {"serial", std::to_string(serial)}, {"steps", "1000"}};
    };
    i.param_sets = {{sp::Size::conformance, p(37, 3)},
                    {sp::Size::conformance, p(1, 1)},
                    {sp::Size::small, p(4000, 400)},
                    {sp::Size::medium, p(40000, 4000)},
                    {sp::Size::large, p(400000, 40000)}};
    i.variants = {sp::Variant::kernel("kokkos")};
    i.ranks = {1, 1 << 30, false};
    i.weak_scale_param = "work";
    i.test_only = true;
    i.source = "docs/SCALING.md Scaling laws (Amdahl: T(N) = T_s + T_p/N)";
    return i;
  }

  void validate(const sp::Params& p, int nranks) const override {
    Technique::validate(p, nranks);
    if (p.i("steps") * slowdown() > (1 << 30))
      throw sp::InputError("split_work: steps x SP_TESTONLY_SLOWDOWN must not exceed 2^30");
  }

  sp::Counts counts(const sp::Params&, int) const override { return {}; }  // integer work: no roofline

  void setup(const sp::Params& p, int nranks) override {
    const int64_t work = p.i("work"), rank = sp::comm::rank();
    steps_ = static_cast<int>(p.i("steps")) * slowdown();
    serial_units_ = p.i("serial");
    // Block distribution: rank r owns units [first_, first_ + local).
    first_ = work * rank / nranks;
    const int64_t last = work * (rank + 1) / nranks;
    out_ = Kokkos::View<uint64_t*>("split_work_out", last - first_);
  }

  void run(const std::string&) override {
    // Serial part: every rank does it (as replicated optimizer or I/O work would).
    uint64_t s = 0;
    for (int64_t u = 0; u < serial_units_; ++u) s ^= unit(static_cast<uint64_t>(-1 - u), steps_);
    serial_result_ = s;
    auto out = out_;
    const uint64_t first = static_cast<uint64_t>(first_);
    const int steps = steps_;
    Kokkos::parallel_for(
        "split_work", out.extent(0), KOKKOS_LAMBDA(const int64_t i) { out(i) = unit(first + i, steps); });
    Kokkos::fence();
    if (sp::comm::size() > 1) sp::comm::barrier();  // one synchronisation per call, as a step would have
  }

  sp::CheckResult check(const std::string&) override {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out_);
    sp::Comparator cmp("exact (integer arithmetic)");
    for (size_t i = 0; i < h.extent(0); ++i)
      cmp.add(h(i) == unit(static_cast<uint64_t>(first_) + i, steps_) ? 0 : 1, 0, 0);
    uint64_t s = 0;
    for (int64_t u = 0; u < serial_units_; ++u) s ^= unit(static_cast<uint64_t>(-1 - u), steps_);
    cmp.add(serial_result_ == s ? 0 : 1, 0, 0);
    return cmp.result();
  }

 private:
  int steps_ = 0;
  int64_t serial_units_ = 0, first_ = 0;
  uint64_t serial_result_ = 0;
  Kokkos::View<uint64_t*> out_;
};

SP_REGISTER_TECHNIQUE(SplitWork);

}  // namespace
