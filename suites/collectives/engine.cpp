#include "suites/collectives/engine.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <climits>
#include <cstring>

#include "kernels/collectives/calibrate.hpp"
#include "kernels/collectives/nccl.hpp"
#include "kernels/comm/ring.hpp"
#include "reference/collectives/collectives_ref.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::coll {

CaseSpec parse_case(const CollInfo& c, const Params& p, int nranks) {
  CaseSpec s;
  s.coll = c.id;
  s.dtype = parse_dtype(p.s("dtype"));
  if (c.has_op) s.op = parse_op(p.s("op"));
  const int64_t count = p.i("count");
  if (count <= 0) throw InputError(c.name + ": count must be > 0 (got " + std::to_string(count) + ")");
  s.count = static_cast<size_t>(count);
  const int64_t inplace = p.i_or("inplace", 1);
  if (inplace != 0 && inplace != 1) throw InputError(c.name + ": inplace must be 0 or 1");
  s.inplace = inplace == 1;
  if (c.has_root) {
    const std::string root = p.s_or("root", "0");
    s.root = root == "last" ? nranks - 1 : static_cast<int>(p.i("root"));
  }
  validate_case(s, nranks);
  return s;
}

void validate_case(const CaseSpec& s, int nranks) {
  const std::string name = s.name();
  if (s.count == 0) throw InputError(name + ": count must be > 0");
  // Every algorithm may send the whole buffer in one message, and MPI counts are int.
  if (s.count > static_cast<size_t>(INT_MAX) / dtype_size(s.dtype))
    throw InputError(name + ": count " + std::to_string(s.count) + " of " + dtype_name(s.dtype) +
                     " exceeds 2^31-1 bytes per message (MPI int counts)");
  if (s.root < 0 || s.root >= nranks)
    throw InputError(name + ": root " + std::to_string(s.root) + " is not a rank (0.." + std::to_string(nranks - 1) +
                     ")");
}

const Algorithm& validate_algorithm(const CaseSpec& s, const std::string& algo, int nranks) {
  const Algorithm& a = algorithm(s.coll, algo);
  const std::string problem = rank_problem(a, nranks);
  if (!problem.empty()) throw InputError(problem);
  return a;
}

namespace {

template <class T>
double as_double(T x) {
  if constexpr (std::is_same_v<T, fp16>)
    return static_cast<float>(x);
  else
    return static_cast<double>(x);
}

template <class T>
T from_int(int v) {
  if constexpr (std::is_same_v<T, fp16>)
    return fp16(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

}  // namespace

struct Engine::Buffers {
  virtual ~Buffers() = default;
  virtual void reset_inputs(const CaseSpec& s, int rank) = 0;
  virtual void run(const CaseSpec& s, comm::Transport& t, const Algorithm& algo, PhaseClock& ph) = 0;
  virtual CheckResult check(const CaseSpec& s, int rank, int p) = 0;
  virtual std::unique_ptr<Engine::Sampler> sampler(comm::Transport& t, const MessageShape& m, comm::Op op) = 0;
};

namespace {

// The outputs can never hold this value (|results| <= 2048), so an element
// an algorithm forgot to write is caught.
constexpr int kSentinel = -3000;

template <class T>
class TypedBuffers : public Engine::Buffers {
  using View = Kokkos::View<T*>;
  using Host = kx::HostMirror<View>;

 public:
  explicit TypedBuffers(size_t n)
      : send_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "coll_send"), n),
        recv_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "coll_recv"), n),
        hsend_(Kokkos::create_mirror_view(send_)),
        hrecv_(Kokkos::create_mirror_view(recv_)) {}

  void reset_inputs(const CaseSpec& s, int rank) override {
    T* a = hsend_.data();
    T* b = hrecv_.data();
    for (size_t i = 0; i < s.count; ++i) a[i] = from_int<T>(reference::coll_input(rank, i));
    for (size_t i = 0; i < s.count; ++i) b[i] = from_int<T>(kSentinel);
    Kokkos::deep_copy(send_, hsend_);  // no-ops when the mirrors are the views
    Kokkos::deep_copy(recv_, hrecv_);
  }

  // Project algorithms get their input copied into the output buffer first
  // (copy_input); device algorithms run on the views, host ones on the host
  // mirrors, staged through the host when the views live on a device.
  void run(const CaseSpec& s, comm::Transport& t, const Algorithm& algo, PhaseClock& ph) override {
    const bool project = algo.source == Source::project;
    if (algo.memory == Memory::device) {
      using Exec = Kokkos::DefaultExecutionSpace;
      if (project) copy_input(s, t.rank(), t.size(), send_, recv_);
      T* out = s.inplace ? send_.data() : recv_.data();
      algo.run.of<T>()(
          Call<T>{t, send_.data(), out, s.count, s.op, s.root, project ? scratch<Exec>(s.count) : nullptr, ph});
      return;
    }
    using Exec = Kokkos::DefaultHostExecutionSpace;
    // The MPI transport moves host memory: stage device data through the host.
    constexpr bool staged = !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename View::memory_space>::accessible;
    if (staged) Kokkos::deep_copy(hsend_, send_);
    T* buf = s.inplace ? hsend_.data() : hrecv_.data();
    if (project) copy_input(s, t.rank(), t.size(), hsend_, hrecv_);
    algo.run.of<T>()(
        Call<T>{t, hsend_.data(), buf, s.count, s.op, s.root, project ? scratch<Exec>(s.count) : nullptr, ph});
    if (staged) {
      if (s.inplace)
        Kokkos::deep_copy(send_, hsend_);
      else
        Kokkos::deep_copy(recv_, hrecv_);
    }
  }

  CheckResult check(const CaseSpec& s, int rank, int p) override {
    Kokkos::deep_copy(hsend_, send_);
    Kokkos::deep_copy(hrecv_, recv_);
    const T* out = s.inplace ? hsend_.data() : hrecv_.data();
    const std::string op = op_name(s.op);
    const size_t n = s.count;
    sp::Comparator cmp("exact (bound 0): small-integer inputs, every partial result representable");
    auto want_reduced = [&](size_t i) { cmp.add(as_double(out[i]), reference::coll_reduced(op, p, i), 0); };
    switch (s.coll) {
      case Coll::all_reduce:
        for (size_t i = 0; i < n; ++i) want_reduced(i);
        break;
      case Coll::reduce_scatter:
        for (size_t i = reference::coll_block_begin(n, p, rank); i < reference::coll_block_begin(n, p, rank + 1); ++i)
          want_reduced(i);
        break;
      case Coll::all_gather:
        for (int b = 0; b < p; ++b)
          for (size_t i = reference::coll_block_begin(n, p, b); i < reference::coll_block_begin(n, p, b + 1); ++i)
            cmp.add(as_double(out[i]), reference::coll_input(b, i), 0);
        break;
      case Coll::broadcast:
        for (size_t i = 0; i < n; ++i) cmp.add(as_double(out[i]), reference::coll_input(s.root, i), 0);
        break;
      case Coll::reduce:
        if (rank == s.root)
          for (size_t i = 0; i < n; ++i) want_reduced(i);
        break;
    }
    return cmp.result();
  }

  // On the collective's own host buffer and scratch (clobbers the buffer).
  std::unique_ptr<Engine::Sampler> sampler(comm::Transport& t, const MessageShape& m, comm::Op op) override {
    struct S : Engine::Sampler {
      Calibrator<T> c;
      explicit S(Calibrator<T> cal) : c(std::move(cal)) {}
      void sample() override { c.sample(); }
      AlphaBetaGamma fit() const override { return c.fit(); }
      AlphaBetaGamma fit_one_way() const override { return c.fit_one_way(); }
      CycleTimes cycle() const override { return c.cycle(); }
    };
    // As large as any algorithm's (run_project's n): a later call must not
    // reallocate the scratch under the calibrator's pointer.
    T* scr = scratch<Kokkos::DefaultHostExecutionSpace>(std::max<size_t>(m.reduce_elems, hsend_.extent(0)));
    std::fill(scr, scr + m.reduce_elems, from_int<T>(1));  // no stray NaN or subnormal in the timing
    return std::make_unique<S>(
        Calibrator<T>(t, m.message_bytes, m.reduce_elems, op, hsend_.data(), hsend_.extent(0), scr, m.cycle));
  }

 private:
  // Out of place, the project's algorithms first copy their input into the
  // output buffer and then work in place there (as MPICH's ring does).
  template <class V>
  static void copy_input(const CaseSpec& s, int rank, int p, const V& src, const V& dst) {
    if (s.inplace) return;
    const comm::Partition part{s.count, p};
    using R = std::pair<size_t, size_t>;
    if (s.coll == Coll::all_gather) {
      const R mine(part.begin(rank), part.begin(rank) + part.size(rank));
      Kokkos::deep_copy(Kokkos::subview(dst, mine), Kokkos::subview(src, mine));
    } else if (s.coll != Coll::broadcast || rank == s.root) {
      Kokkos::deep_copy(dst, src);
    }
  }

  // Scratch of the algorithms on Exec's memory (host, or the device for
  // device algorithms), kept across calls: allocated per call it costs page
  // faults once above glibc's mmap threshold (up to 32 MiB).
  template <class Exec>
  T* scratch(size_t elems) {
    if constexpr (std::is_same_v<typename Exec::memory_space, Kokkos::HostSpace>) {
      if (hscratch_.extent(0) < std::max<size_t>(elems, 1)) hscratch_ = comm::ring_scratch<T, Exec>(elems);
      return hscratch_.data();
    } else {
      if (dscratch_.extent(0) < std::max<size_t>(elems, 1)) dscratch_ = comm::ring_scratch<T, Exec>(elems);
      return dscratch_.data();
    }
  }

  View send_, recv_;
  Host hsend_, hrecv_;
  Kokkos::View<T*, Kokkos::HostSpace> hscratch_;
  View dscratch_;
};

}  // namespace

Engine::Engine(const CaseSpec& spec) : spec_(spec), transport_(comm::make_world_transport()) {
  buf_ = with_dtype(spec.dtype, [&](auto tag) -> std::unique_ptr<Buffers> {
    return std::make_unique<TypedBuffers<decltype(tag)>>(spec.count);
  });
  reset_inputs();
}

Engine::~Engine() = default;

void Engine::reset_inputs() { buf_->reset_inputs(spec_, transport_->rank()); }

void Engine::run(const Algorithm& algo) {
  comm::Transport* t = transport_.get();
#ifdef SP_HAVE_NCCL
  if (algo.memory == Memory::device && algo.source == Source::project) {
    if (!device_transport_) device_transport_ = std::make_unique<nccl::NcclTransport>();
    t = device_transport_.get();
  }
#endif
  last_ = t;
  t->reset_traffic();
  phases_.clear();
  buf_->run(spec_, *t, algo, phases_);
}

CheckResult Engine::check() { return buf_->check(spec_, transport_->rank(), transport_->size()); }

std::unique_ptr<Engine::Sampler> Engine::calibration(const Algorithm& algo) {
  const MessageShape m = message_shape(algo, transport_->size(), spec_.count, dtype_size(spec_.dtype));
  return buf_->sampler(*transport_, m, spec_.op);
}

}  // namespace sp::coll
