#pragma once
// One collectives algorithm as one typed record (nccl-tests and BabelStream
// style): which collective it implements, whose code it is, where its
// buffers live, which rank counts it runs at, its run function, its
// alpha-beta-gamma cost model, its calibration cycle and message shape, and
// the traffic the transport must count for it. The records form one table
// (algorithms.cpp); the engine, the verdicts, the techniques and the
// nccl-tests command read the record and name no algorithm themselves, so
// adding an algorithm is adding its kernel and one record.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernels/collectives/collective.hpp"
#include "kernels/collectives/fp16.hpp"
#include "kernels/collectives/model.hpp"
#include "kernels/collectives/recursive.hpp"
#include "kernels/comm/reduce.hpp"
#include "kernels/comm/transport.hpp"
#include "scaleproof/measure.hpp"

namespace sp::coll {

// Whose code runs: the project's own algorithm over the project's transport,
// or a vendor library's collective (its algorithm is the library's choice).
enum class Source { project, vendor };
// Where the algorithm's buffers live: host memory (the MPI transport; device
// data is staged through host mirrors) or device memory (NCCL).
enum class Memory { host, device };
// The rank counts the run function accepts.
enum class RankRule { any, power_of_two };

inline bool accepts(RankRule r, int p) { return p >= 1 && (r == RankRule::any || is_power_of_two(p)); }

// One call's arguments. Project algorithms find their input already copied
// into buf (out of place, the engine copies it first, as MPICH's ring does)
// and work in place there; vendor algorithms read src and write buf.
template <class T>
struct Call {
  using value_type = T;
  comm::Transport& t;
  const T* src;
  T* buf;
  size_t n;  // elements of the whole buffer
  comm::Op op;
  int root;
  T* room;             // >= n elements of scratch in the algorithm's memory, kept across calls
  PhaseClock& phases;  // the harness's clock for the phases the algorithm reports
  template <class F>
  void phase(const char* name, F&& f) const {
    phases.time(name, f);
  }
};

template <class T>
using RunFn = void (*)(const Call<T>&);

// The run function at each element type the collectives support.
struct Runs {
  RunFn<fp16> f16 = nullptr;
  RunFn<float> f32 = nullptr;
  RunFn<double> f64 = nullptr;
  RunFn<int32_t> i32 = nullptr;
  template <class T>
  RunFn<T> of() const {
    if constexpr (std::is_same_v<T, fp16>)
      return f16;
    else if constexpr (std::is_same_v<T, float>)
      return f32;
    else if constexpr (std::is_same_v<T, double>)
      return f64;
    else
      return i32;
  }
};
// From a generic, captureless lambda taking `const Call<T>&`.
template <class F>
Runs runs(F f) {
  Runs r;
  r.f16 = f, r.f32 = f, r.f64 = f, r.i32 = f;
  return r;
}

// Bytes per traffic phase (the transport's phase labels).
using PhaseBytes = std::map<std::string, double>;

struct Algorithm {
  Coll coll;
  const char* name;  // the variant name (techniques, nccl-tests -a)
  Source source;
  Memory memory;
  RankRule ranks;
  Runs run;
  // The cost model at p >= 2 (docs/collectives.md, "Time of one call"): seconds
  // of one call of n bytes. Null where there is no model: vendor code, and
  // algorithms on device links the calibration cannot time.
  double (*predict)(int p, double n, const AlphaBetaGamma& m);
  // The calibration cycle (steps and link pattern) and the largest message
  // and reduced chunk it is calibrated at (model.hpp, calibrate.hpp).
  CyclePattern cycle;
  MessageShape (*message)(int p, size_t count, size_t elt, const CyclePattern& c);
  // Bytes each rank sends per phase, the largest over ranks, at p >= 2;
  // exact when p divides the count. Null for vendor code (not counted).
  PhaseBytes (*traffic)(int p, double n);
  // Every rank sends the same per phase, so all ranks together send (p-1) n
  // per phase (the ring's defining property, checked exactly).
  bool p_minus_1_n_per_phase;
  // Bytes sent and received by the busiest rank where one rank serves all
  // (the parameter server: 2(p-1) n); null otherwise.
  double (*server_bytes)(int p, double n);
  // Segments overlap across ranks (a pipelined chain): at p > 2 the model's
  // time is the pipeline's depth, not one rank's counted messages.
  bool pipelined;
};

// This build's records (vendor records only where the library is built).
const std::vector<Algorithm>& algorithms();
// The records of one collective, in table order (the model's reference
// algorithm first, vendors last).
std::vector<const Algorithm*> algorithms_of(Coll c);
const Algorithm* find_algorithm(Coll c, const std::string& name);  // null when unknown
// Throws InputError naming the algorithms of this build when unknown.
const Algorithm& algorithm(Coll c, const std::string& name);
// Empty when the algorithm runs at p ranks, else the one-line reason.
std::string rank_problem(const Algorithm& a, int p);

inline bool has_model(const Algorithm& a) { return a.predict != nullptr; }
// The record's cost model; 0 at p = 1 (nothing to communicate), NaN without a model.
double predict_seconds(const Algorithm& a, int p, double n, const AlphaBetaGamma& m);
// The record's traffic formula; empty at p = 1 and without a formula.
PhaseBytes traffic_per_rank(const Algorithm& a, int p, double n);
MessageShape message_shape(const Algorithm& a, int p, size_t count, size_t elt);

}  // namespace sp::coll
