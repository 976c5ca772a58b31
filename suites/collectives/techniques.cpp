// The collectives as registered techniques, one per table entry
// (all_reduce, reduce_scatter, all_gather, broadcast, reduce); variants are
// the algorithms, the baseline is MPICH. Conformance sets cover counts not
// divisible by p, counts below p, in- and out-of-place, sum/max/min and all
// four types; benchmark sets are in-place fp32 powers of two.
#include <cmath>

#include "kernels/collectives/algorithm.hpp"
#include "kernels/collectives/calibrate.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/registry.hpp"
#include "suites/collectives/engine.hpp"
#include "suites/collectives/verdicts.hpp"

namespace sp::coll {
namespace {

sp::Params make_params(const CollInfo& c, const char* dtype, const char* op, long count, int inplace,
                       const char* root = "0") {
  sp::Params p{{"count", std::to_string(count)}, {"dtype", dtype}};
  if (c.has_op) p.set("op", op);
  p.set("inplace", static_cast<int64_t>(inplace));
  if (c.has_root) p.set("root", root);
  return p;
}

class CollectiveTechnique : public sp::Technique {
 public:
  explicit CollectiveTechnique(Coll id) : Technique(describe(coll_info(id))), coll_(coll_info(id)) {}

  static sp::Info describe(const CollInfo& c) {
    sp::Info i;
    i.name = c.name;
    i.family = "collectives";
    i.summary = c.summary;
    // Variants: the records of this collective, the model's reference
    // algorithm first; the baseline is the first vendor record.
    // The records' memory is where the engine keeps the buffers, which it
    // stages in either build: no variant needs one kind of build here.
    for (const Algorithm* a : algorithms_of(c.id)) {
      i.variants.push_back(a->source == Source::vendor ? sp::Variant::vendor(a->name, a->name, sp::MemoryNeed::any)
                                                       : sp::Variant::algorithm(a->name));
      if (a->source == Source::vendor && i.baseline.empty()) i.baseline = a->name;
    }
    i.ranks = {1, 1 << 30, false};
    if (c.id == Coll::all_reduce && !i.baseline.empty())
      i.headline = {i.main_variant() + ":throughput vs " + i.baseline, i.main_variant() + ":time (alpha-beta model)"};
    i.tol.min_vs_baseline = c.min_vs_baseline;
    i.tol.prediction_rel = 0.15;
    i.source = "docs/collectives.md Collectives (Hockney alpha-beta, nccl-tests busbw)";
    using S = sp::Size;
    // Even chunks at p = 2, 3 and 4, first: a chunk sent to or received into
    // the wrong slot has the right size, so it shows as wrong values before an
    // uneven count below can end the run with an MPI truncation abort.
    i.param_sets.push_back({S::conformance, make_params(c, "fp32", "sum", 12, 1)});
    // 1025 is odd and prime to 2, 3, 4: uneven chunks at every p > 1.
    const long odd = 1025;
    for (const char* t : {"fp32", "fp64", "int32", "fp16"})
      i.param_sets.push_back({S::conformance, make_params(c, t, "sum", odd, 1)});
    if (c.has_op)
      for (const char* t : {"fp32", "int32", "fp16"})
        for (const char* op : {"max", "min"}) i.param_sets.push_back({S::conformance, make_params(c, t, op, odd, 1)});
    for (const char* t : {"fp64", "fp16"}) i.param_sets.push_back({S::conformance, make_params(c, t, "sum", odd, 0)});
    if (c.has_op) i.param_sets.push_back({S::conformance, make_params(c, "int32", "min", odd, 0)});
    // Fewer elements than ranks (empty chunks), and a single element.
    i.param_rules = {{"inplace", 0, 1}};
    i.param_sets.push_back({S::conformance, make_params(c, "fp32", "sum", 3, 1)});
    i.param_sets.push_back({S::conformance, make_params(c, "fp32", "sum", 3, 0)});
    i.param_sets.push_back({S::conformance, make_params(c, "int32", "max", 1, 1)});
    if (c.has_root) {
      i.param_sets.push_back({S::conformance, make_params(c, "fp32", "sum", odd, 1, "last")});
      i.param_sets.push_back({S::conformance, make_params(c, "fp16", "max", odd, 0, "last")});
    }
    // Benchmarks (fp32, in place): latency-bound sizes in "small", the
    // bandwidth regime the targets name (>= 1 MiB) in "medium" and "large".
    for (long kib : {4L, 64L}) i.param_sets.push_back({S::small, make_params(c, "fp32", "sum", kib * 256, 1)});
    // The all-reduce is the main job's headline collective: its default
    // (small) run also takes the two bandwidth sizes its targets name.
    if (c.id == Coll::all_reduce)
      for (long mib : {1L, 16L}) i.param_sets.push_back({S::small, make_params(c, "fp32", "sum", mib << 18, 1)});
    for (long mib : {1L, 4L, 16L}) i.param_sets.push_back({S::medium, make_params(c, "fp32", "sum", mib << 18, 1)});
    for (long mib : {64L, 256L}) i.param_sets.push_back({S::large, make_params(c, "fp32", "sum", mib << 18, 1)});
    return i;
  }

  // Algorithms whose rank rule refuses this rank count are left out (the
  // nccl-tests command instead refuses them with an input error).
  std::vector<std::string> available_variants() const override {
    std::vector<std::string> v;
    for (auto& a : info_.variants)
      if (rank_problem(record(a.name), sp::comm::size()).empty()) v.push_back(a.name);
    return v;
  }

  std::string why_unavailable(const std::string& v, int nranks) const override {
    if (const Algorithm* a = find_algorithm(coll_.id, v)) {
      const std::string problem = rank_problem(*a, nranks);
      if (!problem.empty()) return problem;
    }
    return Technique::why_unavailable(v, nranks);
  }

  void validate(const sp::Params& p, int nranks) const override {
    if (!info_.ranks.accepts(nranks))
      throw sp::InputError(info_.name + " cannot use " + std::to_string(nranks) + " ranks");
    for (auto& [k, v] : p.items())
      if (k != "count" && k != "dtype" && k != "op" && k != "inplace" && k != "root")
        throw sp::InputError(info_.name + ": unknown parameter '" + k + "'");
    parse_case(coll_, p, nranks);
  }

  sp::Counts counts(const sp::Params& p, int nranks) const override {
    const CaseSpec s = parse_case(coll_, p, nranks);
    sp::Counts k;
    // bytes = S, nccl-tests' size: the harness's bytes/s is then algbw.
    k.bytes_read = static_cast<double>(s.bytes());
    // Reduction operations per rank of the ring (each rank reduces (p-1)/p of the elements).
    if (coll_.has_op) k.flops = static_cast<double>(s.count) * (nranks - 1) / nranks;
    k.dtype = dtype_name(s.dtype);
    return k;
  }

  void setup(const sp::Params& p, int nranks) override {
    engine_ = std::make_unique<Engine>(parse_case(coll_, p, nranks));
    calls_ = 0;
    phase_sum_.clear();
  }

  void run(const std::string& variant) override {
    if (!current_ || variant != current_->name) current_ = &record(variant);  // no table scan per timed call
    engine_->run(*current_);
    ++calls_;
    for (auto& [ph, s] : engine_->phase_seconds()) phase_sum_[ph] += s;
  }

  sp::CheckResult check(const std::string&) override { return engine_->check(); }

  // `out` holds the service's call statistics (t_median_s). The calibration
  // sampler is made here, after the traffic of the last timed call was read.
  void report_counters(const std::string& variant, std::map<std::string, double>& out) override {
    const Algorithm& a = record(variant);
    collect_counters(*engine_, a, calls_, phase_sum_, out);
    calls_ = 0, phase_sum_.clear();
    sampler_.reset();
    if (has_model(a)) sampler_ = engine_->calibration(a);
  }

  // The model check: the collective's own calls timed in turn with
  // calibration samples (verdicts.cpp, collect_counters). The project
  // algorithm against the vendor's, call by call (as the nccl-tests command
  // measures them): the harness's separate timed loops can fall into
  // different states of this shared machine. Each timed call follows
  // kSettleCalls untimed ones of the same algorithm, so it starts from the
  // caches its own algorithm leaves (engine.hpp).
  std::vector<sp::Probe> probes(const std::string& variant) const override {
    std::vector<sp::Probe> p;
    if (has_model(record(variant))) {
      // 15 samples: the median of k calls has a standard error of about
      // 1.25 s / sqrt(k) (s: the spread of single calls; normal
      // approximation), 0.32 s at k = 15. Two standard errors stay inside
      // the model band (prediction_rel 0.15) while single calls spread by
      // up to about 0.15 / (2 x 0.32) = 23% of their median (the measured
      // side only: the calibration's own median adds its error to this).
      sp::Probe check{kModelCheck, {variant}, kCalibrationSample, 15, kSettleCalls};
      p.push_back(check);
    }
    if (variant == info_.main_variant() && !info_.baseline.empty() && sp::comm::size() > 1)
      p.push_back({sp::kPairedVsBaseline, {variant, info_.baseline}, "", 9, kSettleCalls});
    return p;
  }

  void run_probe(const std::string& call) override {
    if (call == kCalibrationSample)
      sampler_->sample();
    else
      engine_->run(record(call));
  }

  void probes_done(const std::string& variant, std::map<std::string, double>& out) override {
    if (sampler_) fit_model(*engine_, record(variant), *sampler_, out);
    sampler_.reset();
  }

  void teardown() override { sampler_.reset(), engine_.reset(); }  // the sampler points into the engine's buffers

  void predict(const sp::Params& p, const std::string& variant, const sp::Measurement& m, const sp::Machine&,
               std::vector<sp::Verdict>& out) const override {
    judge_case(info_, parse_case(coll_, p, m.ranks), p.label(), record(variant), m, out);
  }

 private:
  // The harness names variants by string; each is looked up once per call
  // into its record (the variants are the records' names, describe()).
  const Algorithm& record(const std::string& variant) const { return algorithm(coll_.id, variant); }

  const CollInfo& coll_;
  std::unique_ptr<Engine> engine_;
  long calls_ = 0;
  std::map<std::string, double> phase_sum_;
  std::unique_ptr<Engine::Sampler> sampler_;
  const Algorithm* current_ = nullptr;
};

SP_REGISTER_TECHNIQUE(CollectiveTechnique, Coll::all_reduce);
SP_REGISTER_TECHNIQUE(CollectiveTechnique, Coll::reduce_scatter);
SP_REGISTER_TECHNIQUE(CollectiveTechnique, Coll::all_gather);
SP_REGISTER_TECHNIQUE(CollectiveTechnique, Coll::broadcast);
SP_REGISTER_TECHNIQUE(CollectiveTechnique, Coll::reduce);

}  // namespace
}  // namespace sp::coll
