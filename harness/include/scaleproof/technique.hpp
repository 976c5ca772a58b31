#pragma once
// The one interface every technique implements (RAJAPerf-style): the
// constructor declares the metadata, the methods are the shared body.
// The runner, checker, models and reports only ever talk to this class.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scaleproof/measure.hpp"
#include "scaleproof/params.hpp"

namespace sp {

// Work done by one call of the technique on one rank.
struct Counts {
  double flops = 0;       // floating-point (or integer MAC x2) operations
  double bytes_read = 0;  // compulsory traffic to/from main memory
  double bytes_written = 0;
  std::string dtype = "fp64";  // which peak roof applies: fp32 | fp64 | ...
  // Bytes this rank holds during a call (inputs, outputs, work space); 0 =
  // not declared, and bytes() is taken as the estimate. A case above the
  // machine's memory per rank is refused before it starts.
  double footprint = 0;
  double bytes() const { return bytes_read + bytes_written; }
  double intensity() const { return bytes() > 0 ? flops / bytes() : 0.0; }
};

// Kernel output vs reference. Each element has its own bound (from an error
// analysis of the computation); an element outside it counts as wrong.
struct CheckResult {
  long long checked = 0;
  long long wrong = 0;
  double max_abs_err = 0;
  double max_rel_err = 0;
  double max_bound = 0;    // largest per-element bound used
  std::string bound_rule;  // e.g. "gamma_K*|A||B| (Higham 3.5)"
  std::string note;
  bool passed() const { return wrong == 0 && checked > 0; }
  void merge(const CheckResult& o);  // for techniques that check several outputs
};

// Which ranks counts a technique can use.
struct RankRule {
  int min = 1;
  int max = 1;  // single-rank by default
  bool power_of_two = false;
  bool accepts(int n) const;
  std::string describe() const;
};

// Declared tolerance bands for the analytical predictions.
struct Tolerance {
  double roof_min = 0.0;         // measured performance >= roof_min x attainable
  double roof_max = 1.15;        // and <= roof_max x attainable (above means the counts are wrong)
  double min_vs_baseline = 0;    // project variant throughput / baseline throughput
  double prediction_rel = 0.15;  // |measured - predicted| / predicted for model predictions
  // `scaleproof scale`: measured speedup / fitted-law speedup must lie in
  // [1 - scaling_band, 1 + scaling_band] at every timed point.
  double scaling_band = 0.10;
};

// The accepted range of one parameter. The type of a parameter is that of
// its declared values (integer, number or text); undeclared ranges are
// integer >= 1 and number finite. Text is the technique's validate() to judge.
struct ParamRule {
  std::string name;
  double lo = 1;
  double hi = 9.2e18;
};

// What a variant is. kernel: the project's own Kokkos kernel (one source for
// every back end); vendor: a library's implementation of the same operation,
// the baseline a kernel is compared with; algorithm: one of several
// algorithms of the project that compute the same result (a collective's
// ring or tree); strategy: one of several ways of organising the same
// training computation (a ZeRO stage, checkpointing or not).
enum class VariantKind { kernel, vendor, algorithm, strategy };
const char* to_string(VariantKind k);

// Where a variant's buffers must live. host: the build's default memory space
// is host-accessible (a host library, or code that hands buffers to MPI or
// reads them directly); device: it is not (a CUDA library). The harness offers
// a variant only in builds that meet its need.
enum class MemoryNeed { any, host, device };

// One variant, as a technique declares it. The harness names variants by
// `name` in options and results, and reads kind and library from here.
struct Variant {
  std::string name;
  VariantKind kind = VariantKind::kernel;
  std::string library;  // the vendor library a vendor variant calls; "" otherwise
  MemoryNeed needs = MemoryNeed::any;

  static Variant kernel(std::string n, MemoryNeed m = MemoryNeed::any) {
    return {std::move(n), VariantKind::kernel, {}, m};
  }
  static Variant vendor(std::string n, std::string lib, MemoryNeed m) {
    return {std::move(n), VariantKind::vendor, std::move(lib), m};
  }
  static Variant algorithm(std::string n, MemoryNeed m = MemoryNeed::any) {
    return {std::move(n), VariantKind::algorithm, {}, m};
  }
  static Variant strategy(std::string n, MemoryNeed m = MemoryNeed::any) {
    return {std::move(n), VariantKind::strategy, {}, m};
  }
  // Whether this build's default memory space meets `needs`.
  bool runs_in_this_build() const;
};

struct Info {
  std::string name;    // unique, e.g. "gemm"
  std::string family;  // folder name under kernels/, reference/, suites/
  std::string summary;
  std::vector<ParamSet> param_sets;
  std::vector<ParamRule> param_rules;  // only where the default range does not hold
  std::vector<Variant> variants;       // variants[0] is the project's own: its roofline verdict is judged
  std::string baseline;                // the vendor variant min_vs_baseline compares with ("" = none)
  // Other ways the baseline's library runs the same case (e.g. on plain
  // tensors rather than in its chosen layout): the throughput verdict
  // compares with the fastest of the baseline and these, so that the ratio
  // is against the best the library offers.
  std::vector<std::string> baseline_alternatives;
  RankRule ranks;
  Tolerance tol;
  std::string roof_probe;  // "bandwidth" or "peak": this technique measures a machine roof
  std::string source;      // citation for the prediction (a section of docs/<family>.md)
  // Weak scaling (`scaleproof scale --mode weak`): the integer parameter
  // multiplied by the rank (or thread) count. Empty = the first integer parameter.
  std::string weak_scale_param;
  // Verdict quantities that summarize the technique on the report's first
  // screen: a quantity as the verdict names it, or "variant:quantity";
  // kHeadlineVsBaseline stands for "throughput vs <baseline>".
  std::vector<std::string> headline;
  // Test-only techniques (harness self-tests) run only when named with
  // --technique, never through a family or the default selection.
  bool test_only = false;

  // The declared variant named `name`, or nullptr.
  const Variant* variant(const std::string& name) const;
  const std::string& main_variant() const { return variants.front().name; }
  std::vector<std::string> variant_names() const;
};

// What the runner measured for one (technique, variant, params) case.
struct Measurement {
  double seconds = 0;  // per call, median over repetitions, max over ranks
  int ranks = 1;
  int threads = 1;
  std::map<std::string, double> counters;  // technique-reported counters
};

// Optional counter of the project variant: its throughput over the
// baseline's, timed call by call in turn (baseline time / own time; with
// baseline alternatives, the fastest of them, each also under
// kPairedVsBaseline + "." + its variant). When
// present the "throughput vs baseline" verdict uses it instead of comparing
// the two variants' separate timed loops.
inline constexpr const char* kPairedVsBaseline = "paired_vs_baseline";

inline constexpr const char* kHeadlineVsBaseline = "throughput vs baseline";

// Roofs measured in the same run (see models.cpp).
struct Machine {
  double bandwidth = 0;                // bytes/s, best STREAM triad
  std::map<std::string, double> peak;  // FLOP/s by dtype
  double peak_for(const std::string& dtype) const;
};

// A declaration the harness cannot run is a programming error, thrown as
// std::logic_error when the registry builds the prototypes: no variants,
// variants[0] a vendor library, a vendor record without its library (or a
// library on another kind), a name declared twice, a baseline that names no
// declared variant.
void check_declaration(const Info& info);

// A verdict's outcome: pass or fail when its ratio was judged against its
// band; info when it is reported only (the band does not apply to this case,
// e.g. a one-rank figure of a multi-rank model, or no value could fail it).
enum class Status { pass, fail, info };
// The spelling in results files and reports: "PASS", "FAIL", "INFO".
const char* to_string(Status s);
// The inverse of to_string; any other word is an InputError naming it.
Status parse_status(const std::string& word);
inline Status pass_if(bool ok) { return ok ? Status::pass : Status::fail; }

struct Verdict {
  std::string technique, variant, params, quantity, unit;
  double predicted = 0, measured = 0;
  double ratio = 0;                 // the judged number (e.g. fraction of roof, measured/predicted)
  double band_lo = 0, band_hi = 0;  // accepted range of ratio (band_hi = inf: no upper limit)
  Status status = Status::info;
  std::string note;

  bool in_band() const { return ratio >= band_lo && ratio <= band_hi; }
  // The one rule of a banded verdict: pass inside [band_lo, band_hi], fail
  // outside; info when this case is not judged.
  void judge(bool judged = true) { status = judged ? pass_if(in_band()) : Status::info; }
};

// The builders every family uses, so that a verdict's shape is defined once.
// A quantity counted exactly (bytes, messages, parameters, buffers) against
// its closed form: band [1, 1], pass only when the two are equal; ratio =
// measured / predicted with 0 / 0 = 1 and x / 0 = inf.
Verdict exact_verdict(const std::string& technique, const std::string& variant, const Params& p,
                      const std::string& quantity, const std::string& unit, double predicted, double measured,
                      std::string note = {});

// The roofline verdict (Williams et al. 2009): the measured time against
// t_roof = max(flops / peak, bytes / bandwidth), ratio = t_roof / measured
// (the fraction of the roof reached), band [tol.roof_min, tol.roof_max];
// judged when `judged`. A memory-bound case whose bytes are under 4x the
// reported last-level cache is reported, not judged (STREAM's rule): its data
// can stay in the cache between calls, and the bandwidth roof is memory's.
// Empty when the counts or the roofs it needs are missing.
std::optional<Verdict> roofline_verdict(const Info& info, const std::string& variant, const Params& p, const Counts& c,
                                        const Measurement& m, const Machine& machine, bool judged);

class Technique {
 public:
  explicit Technique(Info info) : info_(std::move(info)) {}
  virtual ~Technique() = default;
  const Info& info() const { return info_; }

  // Throws InputError naming the problem. Default: the parameter schema
  // (check_params) and the rank rule must accept nranks.
  virtual void validate(const Params& p, int nranks) const;
  virtual Counts counts(const Params& p, int nranks) const = 0;
  // Variants that can run in this build: by default the declared ones whose
  // memory need this build meets (a technique overrides it where a variant
  // needs more, e.g. a library found at configure time).
  virtual std::vector<std::string> available_variants() const;
  // Why a declared variant cannot run at `nranks` ranks in this build, or ""
  // when it can (the error when one is asked for by name; `scale` asks for
  // every rank count it will launch before the first launch).
  virtual std::string why_unavailable(const std::string& variant, int nranks) const;

  virtual void setup(const Params& p, int nranks) = 0;        // allocate, fill inputs (untimed)
  virtual void run(const std::string& variant) = 0;           // one call (timed; runner fences)
  virtual CheckResult check(const std::string& variant) = 0;  // output of the last run vs reference
  virtual void report_counters(const std::string& /*variant*/, std::map<std::string, double>& /*out*/) {}
  // Extra timings of this variant's case, run and timed by the service after
  // report_counters(); each writes its counter (measure.hpp). Collective over
  // ranks: every rank declares the same probes.
  virtual std::vector<Probe> probes(const std::string& /*variant*/) const { return {}; }
  // One call a probe names (untimed here: the service times it).
  virtual void run_probe(const std::string& call) { run(call); }
  // The clock handle whose phases a probe with `phase` reads (the one the
  // calls a probe names record into); nullptr: none.
  virtual const PhaseClock* phase_clock() const { return nullptr; }
  // After the probes, with their counters in `out`: quantities derived from
  // them (a model fitted to a calibration sampled in between timed calls).
  virtual void probes_done(const std::string& /*variant*/, std::map<std::string, double>& /*out*/) {}
  virtual void teardown() {}

  // Predictions judged against a measurement. Default: the roofline
  // (Williams et al. 2009): time >= max(flops/peak, bytes/bandwidth).
  virtual void predict(const Params& p, const std::string& variant, const Measurement& m, const Machine& machine,
                       std::vector<Verdict>& out) const;

 protected:
  // The probe behind the "throughput vs baseline" verdict (counter
  // kPairedVsBaseline): the main variant and the baseline called in turn,
  // 9 timed calls each, each after one untimed call of its own, the medians
  // divided. Empty for any other variant and where the baseline cannot run
  // in this build. For a technique whose setup() prepares every variant, so
  // that the baseline runs inside the main variant's case.
  std::vector<Probe> paired_with_baseline(const std::string& variant) const;

  Info info_;
};

enum class ParamType { integer, number, text };
// The type of parameter `key`, from the values the technique declares for it.
ParamType param_type(const Info& info, const std::string& key);
// One value against the schema: empty, not a number, NaN, infinite,
// overflowing or out of range is an InputError naming the parameter.
void check_param_value(const Info& info, const std::string& key, const std::string& value);
// Every value, and every product of two integer parameters (what a kernel
// multiplies to index) within 2^62, computed in 128 bits.
void check_params(const Info& info, const Params& p);

using TechniqueFactory = std::unique_ptr<Technique> (*)();

}  // namespace sp
