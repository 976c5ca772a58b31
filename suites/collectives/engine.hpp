#pragma once
// One timing-and-checking engine for every collective and algorithm: owns a
// case's buffers (Kokkos Views; staged through host mirrors for the MPI
// transport when they live on a device), runs one call of an algorithm's
// record (algorithm.hpp), records its per-phase times (on the harness's PhaseClock) and
// the transport's traffic, and checks the output against the plain-loop reference.
#include <map>
#include <memory>
#include <string>

#include "kernels/collectives/algorithm.hpp"
#include "kernels/collectives/collective.hpp"
#include "kernels/collectives/dtype.hpp"
#include "kernels/collectives/model.hpp"
#include "kernels/comm/transport.hpp"
#include "scaleproof/measure.hpp"
#include "scaleproof/params.hpp"
#include "scaleproof/technique.hpp"

namespace sp::coll {

struct CaseSpec {
  Coll coll = Coll::all_reduce;
  Dtype dtype = Dtype::fp32;
  comm::Op op = comm::Op::sum;
  size_t count = 0;  // elements of the whole buffer (nccl-tests' count for all-reduce)
  bool inplace = true;
  int root = 0;
  size_t bytes() const { return count * dtype_size(dtype); }
  std::string name() const { return coll_info(coll).name; }
};

// Parameters as the techniques declare them: count, dtype, op (reducing
// collectives), inplace (0/1), root (rooted ones: a rank, or "last").
CaseSpec parse_case(const CollInfo& c, const Params& p, int nranks);
// Throw InputError (one line) for a case or algorithm this build cannot run.
void validate_case(const CaseSpec& s, int nranks);
// The record of `algo` for this case's collective, if it runs at nranks.
const Algorithm& validate_algorithm(const CaseSpec& s, const std::string& algo, int nranks);

// Untimed calls of an algorithm before each of its timed calls whenever
// something else ran in between (another algorithm, a calibration sample):
// nccl-tests times a loop of back-to-back calls, so a call there starts from
// the caches the same collective left, and a timed call here must start
// from that state too. When the buffers and the scratch exceed the
// last-level cache, one call of its own does not bring every line back
// into that state, so more than one is needed (docs/collectives.md, "Settling calls"); nccl-tests
// --settle sets another count for one run.
inline constexpr int kSettleCalls = 3;

class Engine {
 public:
  explicit Engine(const CaseSpec& spec);
  ~Engine();
  const CaseSpec& spec() const { return spec_; }
  // The transport of the last call (MPI or self; NCCL for device algorithms).
  comm::Transport& transport() { return last_ ? *last_ : *transport_; }
  void reset_inputs();              // the reference inputs, sentinels in the output buffer
  void run(const Algorithm& algo);  // one call
  CheckResult check();              // output of the last call vs the reference
  // Seconds of each phase of the last call on this rank (ring and
  // Rabenseifner all-reduce: "reduce-scatter" and "all-gather").
  const std::map<std::string, double>& phase_seconds() const { return phases_.totals(); }
  // alpha, beta (on the link pattern of the record's cycle) and gamma
  // (reduction kernel) at this algorithm's message sizes, on this case's
  // buffers, sampled in between timed calls so that both see the same
  // background load: start, sample() after each call, then fit().
  // fit_one_way(): the textbook ping-pong calibration, for comparison.
  // Collective over ranks; clobbers the buffers (reset_inputs before a check).
  struct Sampler {
    virtual ~Sampler() = default;
    virtual void sample() = 0;
    virtual AlphaBetaGamma fit() const = 0;
    virtual AlphaBetaGamma fit_one_way() const = 0;
    // Exchange algorithms: median seconds of the ring cycle's parts at the
    // largest message (reduce-scatter exchange, reduction, all-gather exchange).
    virtual CycleTimes cycle() const = 0;
  };
  std::unique_ptr<Sampler> calibration(const Algorithm& algo);

  struct Buffers;  // typed storage, engine.cpp

 private:
  CaseSpec spec_;
  std::unique_ptr<comm::Transport> transport_;         // host memory: MPI, or self without MPI
  std::unique_ptr<comm::Transport> device_transport_;  // NCCL, made at the first call of a device algorithm
  comm::Transport* last_ = nullptr;
  std::unique_ptr<Buffers> buf_;
  PhaseClock phases_;
};

}  // namespace sp::coll
