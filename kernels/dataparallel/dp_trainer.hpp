#pragma once
// Data-parallel training of the MLP over p ranks (dp_strategy.hpp lists the
// strategies). Each rank takes B/p consecutive samples of the global batch,
// computes the gradient of the global mean loss on them, and the strategy
// combines the ranks' gradients and updates the parameters. All messages go
// through a comm::Transport, so bytes are counted per phase; every buffer
// goes through a MemoryTracker, so bytes held are counted per category.
//
// Sharding (ZeRO): each layer's parameter block is split into p balanced
// chunks (comm::Partition); rank r owns chunk r of every layer. A rank's
// shard is the concatenation of its chunks, layer after layer.
//
// Memory spaces: compute buffers live in the default memory space; messages
// go through DpComm (dp_comm.hpp), which stages them through host memory
// when that space is not host-accessible (CUDA).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <memory>
#include <vector>

#include "kernels/comm/ring.hpp"
#include "kernels/dataparallel/dp_comm.hpp"
#include "kernels/dataparallel/dp_strategy.hpp"
#include "kernels/dataparallel/memory_tracker.hpp"
#include "kernels/dataparallel/mlp_kernels.hpp"
#include "scaleproof/measure.hpp"

namespace sp::dp {

// The phase of a training step that DpTrainer records on its PhaseClock:
// forward, backward and gradient communication, without the optimizer.
inline constexpr const char* kPassPhase = "pass";

template <class T>
class DpTrainer {
  static constexpr int kOverlapSlices = 8;

 public:
  // bucket_cap: DDP bucket size in elements (MlpShape::buckets); 0 = one layer per bucket.
  DpTrainer(const MlpShape& s, int global_batch, const AdamConfig& cfg, Variant v, comm::Transport& t,
            size_t bucket_cap = 0)
      : s_(s),
        B_(global_batch),
        cfg_(cfg),
        v_(v),
        t_(t),
        p_(t.size()),
        r_(t.rank()),
        bl_(global_batch / t.size()),
        comm_(t, mem_, s.n_params()) {
    const int L = s_.layers();
    bucket_hi_.assign(L + 1, 0);  // bucket_hi_[lo]: last layer of the bucket that starts at layer lo, else 0
    for (auto b : s_.buckets(v_.strategy == Strategy::ddp ? bucket_cap : 0)) bucket_hi_[b.lo] = b.hi;
    size_t so = 0;
    for (int l = 1; l <= L; ++l) {
      const comm::Partition part{s_.block_size(l), p_};
      chunk_begin_.push_back(part.begin(r_));
      chunk_size_.push_back(part.size(r_));
      shard_off_.push_back(so);
      so += part.size(r_);
    }
    shard_n_ = so;
    allocate();
  }
  ~DpTrainer() { t_.wait_all(); }

  // Starts training afresh from theta0 on the global batch (X, Y).
  void load(const std::vector<T>& theta0, const std::vector<T>& X, const std::vector<T>& Y) {
    const size_t din = s_.dims.front(), dout = s_.dims.back();
    copy_in(A_[0], X.data() + r_ * bl_ * din, bl_ * din);
    copy_in(Yt_, Y.data() + r_ * bl_ * dout, bl_ * dout);
    if (v_.strategy == Strategy::zero3) {
      for (int l = 1; l <= s_.layers(); ++l)
        copy_in(params_, theta0.data() + s_.block_offset(l) + cb(l), chunk_size(l), shard_off(l));
    } else {
      copy_in(params_, theta0.data(), s_.n_params());
    }
    if (master_.extent(0) > 0)
      for (int l = 1; l <= s_.layers(); ++l)
        std::copy_n(theta0.data() + s_.block_offset(l) + cb(l), chunk_size(l), master_.data() + shard_off(l));
    Kokkos::deep_copy(m_, T(0)), Kokkos::deep_copy(v_m_, T(0));
    if (mh_.extent(0) > 0) Kokkos::deep_copy(mh_, T(0)), Kokkos::deep_copy(vh_, T(0));
    step_ = 0;
    host_link_bytes_ = 0;
    Kokkos::fence();
  }

  void step() {
    ++step_;
    clock_.time(kPassPhase, [&] {
      forward();
      backward();
      finish_gradients();
    });
    optimizer_step();
    after_update();
    t_.wait_all();  // every handle is complete: release them
  }

  // (global parameter index, value) for each parameter this rank holds.
  std::vector<std::pair<size_t, T>> held_params() const {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), params_);
    std::vector<std::pair<size_t, T>> out;
    if (v_.strategy == Strategy::zero3) {
      for (int l = 1; l <= s_.layers(); ++l)
        for (size_t i = 0; i < chunk_size(l); ++i) out.push_back({s_.block_offset(l) + cb(l) + i, h(shard_off(l) + i)});
    } else {
      for (size_t i = 0; i < s_.n_params(); ++i) out.push_back({i, h(i)});
    }
    return out;
  }

  const MemoryTracker& memory() const { return mem_; }
  void reset_memory_peaks() { mem_.reset_peaks(); }
  size_t shard_size() const { return shard_n_; }
  double host_link_bytes() const { return host_link_bytes_; }
  // The harness's clock handle each step's forward + backward + gradient
  // communication is recorded on (phase kPassPhase).
  const PhaseClock& pass_clock() const { return clock_; }
  // For the overlap measurement (IMB-NBC): run the pass without its
  // communication, or without its computation. Results are then meaningless.
  void set_skip(bool compute, bool comm) { skip_compute_ = compute, comm_.skip = comm; }

 private:
  size_t cb(int l) const { return chunk_begin_[l - 1]; }
  size_t chunk_size(int l) const { return chunk_size_[l - 1]; }
  size_t shard_off(int l) const { return shard_off_[l - 1]; }
  bool sharded_grads() const { return v_.strategy == Strategy::zero2 || v_.strategy == Strategy::zero3; }

  Vec<T> alloc(Mem c, const char* name, size_t n) {
    mem_.add(c, n * sizeof(T));
    return Vec<T>(std::string(name), n);
  }
  void release(Mem c, Vec<T>& v) {
    if (v.extent(0) == 0) return;
    mem_.sub(c, v.extent(0) * sizeof(T));
    v = Vec<T>();
  }

  void allocate() {
    const int L = s_.layers();
    const size_t n = s_.n_params();
    const bool server = v_.strategy == Strategy::param_server && r_ == 0;
    params_ = alloc(Mem::params, "dp_params", v_.strategy == Strategy::zero3 ? shard_n_ : n);
    if (!sharded_grads())
      grads_ = alloc(Mem::grads, "dp_grads", n);
    else
      grads_ = alloc(Mem::grads, "dp_grad_shard", shard_n_);
    // Optimizer state: full on DDP ranks and the server, a shard under ZeRO, on the host when offloaded.
    size_t opt_n = 0;
    if (v_.strategy == Strategy::ddp || server)
      opt_n = n;
    else if (v_.strategy != Strategy::param_server)
      opt_n = shard_n_;
    if (v_.offload) {
      mh_ = Kokkos::View<T*, Kokkos::HostSpace>("dp_m_host", opt_n);
      vh_ = Kokkos::View<T*, Kokkos::HostSpace>("dp_v_host", opt_n);
      gh_ = Kokkos::View<T*, Kokkos::HostSpace>("dp_g_host", opt_n);
      master_ = Kokkos::View<T*, Kokkos::HostSpace>("dp_master_host", opt_n);
      mem_.add(Mem::host_optim, 4.0 * opt_n * sizeof(T));
    } else {
      m_ = alloc(Mem::optim, "dp_m", opt_n);
      v_m_ = alloc(Mem::optim, "dp_v", opt_n);
    }
    if (server && p_ > 1) {
      ps_recv_ = Kokkos::View<T*, Kokkos::HostSpace>("dp_ps_recv", n);
      mem_.add(Mem::comm, n * sizeof(T));
    }
    // Activations: inputs, per-layer pre-activations and outputs, two gradient buffers.
    A_.resize(L + 1), Z_.resize(L + 1);
    A_[0] = alloc(Mem::activations, "dp_x", bl_ * s_.dims.front());
    int widest = 0;
    for (int l = 1; l <= L; ++l) {
      Z_[l] = alloc(Mem::activations, "dp_z", bl_ * s_.out(l));
      A_[l] = alloc(Mem::activations, "dp_a", bl_ * s_.out(l));
      widest = std::max(widest, s_.dims[l]);
    }
    widest = std::max(widest, s_.dims.front());
    dZ_[0] = alloc(Mem::activations, "dp_dz0", bl_ * widest);
    dZ_[1] = alloc(Mem::activations, "dp_dz1", bl_ * widest);
    Yt_ = alloc(Mem::activations, "dp_target", bl_ * s_.dims.back());
    gathered_.resize(L + 2), layer_grad_.resize(L + 1), gather_ring_.resize(L + 2), grad_ring_.resize(L + 1);
  }

  void copy_in(Vec<T> dst, const T* src, size_t n, size_t off = 0) {
    Kokkos::deep_copy(DevSpan<T>(dst.data() + off, n),
                      Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(src, n));
  }

  // Lets every collective in flight advance; a finished gradient collective
  // is completed at once, so ZeRO-2 frees each layer's full gradient as early as it can.
  void progress_all() {
    for (auto& r : gather_ring_)
      if (r) r->progress();
    for (int l = 1; l <= s_.layers(); ++l)
      if (grad_ring_[l]) {
        grad_ring_[l]->progress();
        if (grad_ring_[l]->done()) complete_grad_ring(l);
      }
  }
  // DDP's bucket that layer l completes: its first parameter and size (0 if l ends no bucket).
  size_t bucket_offset(int l) const { return s_.block_offset(l); }
  size_t bucket_size(int l) const {
    return bucket_hi_[l] ? s_.block_offset(bucket_hi_[l] + 1) - s_.block_offset(l) : 0;
  }

  void complete_grad_ring(int l) {
    comm_.finish_ring(grad_ring_[l]);
    if (v_.strategy == Strategy::ddp) {
      comm_.from_stage(grads_.data() + bucket_offset(l), bucket_size(l), bucket_offset(l));
      return;
    }
    comm_.from_stage(layer_grad_[l].data(), s_.block_size(l), s_.block_offset(l));
    keep_grad_chunk(l);
  }

  // ZeRO-3: layer l's full parameters, assembled from every rank's chunk.
  void start_gather(int l) {
    if (l < 1 || l > s_.layers() || gathered_[l].extent(0) > 0) return;
    const size_t n = s_.block_size(l);
    gathered_[l] = alloc(Mem::params, "dp_gathered", n);
    Kokkos::deep_copy(DevSpan<T>(gathered_[l].data() + cb(l), chunk_size(l)),
                      DevSpan<T>(params_.data() + shard_off(l), chunk_size(l)));
    if (v_.overlap) {
      T* h = comm_.to_host(gathered_[l].data(), n, s_.block_offset(l));
      gather_ring_[l] = comm_.start_ring(h, n, NbRing<T>::Kind::all_gather, 1000 + l);
    } else {
      comm_.all_gather(gathered_[l].data(), n, s_.block_offset(l));
    }
  }
  CVec<T> layer_params(int l, int next) {
    if (v_.strategy != Strategy::zero3) return DevSpan<T>(params_.data() + s_.block_offset(l), s_.block_size(l));
    start_gather(l);
    if (gather_ring_[l]) {
      comm_.finish_ring(gather_ring_[l]);
      comm_.from_stage(gathered_[l].data(), s_.block_size(l), s_.block_offset(l));
    }
    if (v_.overlap) start_gather(next);  // prefetch: overlaps with layer l's compute
    return gathered_[l];
  }
  void drop_layer_params(int l) {
    if (v_.strategy == Strategy::zero3) release(Mem::params, gathered_[l]);
  }

  // Runs kernel(rows) over [0, n); with overlap in slices, letting the
  // collectives in flight progress after each (MPICH moves messages only
  // inside MPI calls, so the slices set how often communication can advance).
  // One rank has no collective in flight: its products run whole.
  template <class Kernel>
  void for_slices(int n, Kernel&& kernel) {
    const int slices = v_.overlap && p_ > 1 ? std::min(n, kOverlapSlices) : 1;
    for (int s = 0; s < slices; ++s) {
      if (!skip_compute_) kernel(Rows{n * s / slices, n * (s + 1) / slices});
      Kokkos::fence();
      progress_all();
    }
  }

  void forward() {
    const int L = s_.layers();
    for (int l = 1; l <= L; ++l) {
      CVec<T> P = layer_params(l, l + 1);
      for_slices(static_cast<int>(bl_),
                 [&](Rows rows) { layer_forward<T>(P, A_[l - 1], Z_[l], A_[l], rows, s_.in(l), s_.out(l), l < L); });
      drop_layer_params(l);
    }
  }

  void backward() {
    const int L = s_.layers();
    if (!skip_compute_) loss_grad<T>(A_[L], Yt_, dZ_[0], B_);
    int cur = 0;
    for (int l = L; l >= 1; --l) {
      CVec<T> P = layer_params(l, l - 1);
      Vec<T> G = sharded_grads() ? (layer_grad_[l] = alloc(Mem::grads, "dp_layer_grad", s_.block_size(l)))
                                 : Vec<T>(DevSpan<T>(grads_.data() + s_.block_offset(l), s_.block_size(l)));
      for_slices(s_.out(l), [&](Rows rows) {
        layer_weight_grad<T>(dZ_[cur], A_[l - 1], G, static_cast<int>(bl_), s_.in(l), s_.out(l), rows);
      });
      if (l > 1)
        for_slices(static_cast<int>(bl_), [&](Rows rows) {
          layer_input_grad<T>(P, dZ_[cur], Z_[l - 1], dZ_[1 - cur], rows, s_.in(l), s_.out(l));
        });
      drop_layer_params(l);
      gradient_ready(l);
      progress_all();
      cur = 1 - cur;
    }
  }

  // Layer l's gradient is complete on this rank.
  void gradient_ready(int l) {
    const size_t n = s_.block_size(l), slot = s_.block_offset(l);
    if (v_.strategy == Strategy::ddp && v_.overlap) {
      if (bucket_size(l) == 0) return;  // the bucket is complete only with its first layer
      T* h = comm_.to_host(grads_.data() + bucket_offset(l), bucket_size(l), bucket_offset(l));
      grad_ring_[l] = comm_.start_ring(h, bucket_size(l), NbRing<T>::Kind::all_reduce, 2000 + l);
    } else if (sharded_grads() && v_.overlap) {
      T* h = comm_.to_host(layer_grad_[l].data(), n, slot);
      grad_ring_[l] = comm_.start_ring(h, n, NbRing<T>::Kind::reduce_scatter, 2000 + l);
    } else if (sharded_grads()) {
      comm_.reduce_scatter(layer_grad_[l].data(), n, slot);
      keep_grad_chunk(l);
    }
  }
  // ZeRO-2/3: keep this rank's reduced chunk of layer l's gradient, free the rest.
  void keep_grad_chunk(int l) {
    Kokkos::deep_copy(DevSpan<T>(grads_.data() + shard_off(l), chunk_size(l)),
                      DevSpan<T>(layer_grad_[l].data() + cb(l), chunk_size(l)));
    release(Mem::grads, layer_grad_[l]);
  }

  void finish_gradients() {
    const int L = s_.layers();
    for (int l = L; l >= 1; --l) {
      const size_t n = s_.block_size(l), slot = s_.block_offset(l);
      if (grad_ring_[l]) complete_grad_ring(l);
      if (sharded_grads() && layer_grad_[l].extent(0) > 0) keep_grad_chunk(l);  // overlap with comm skipped
      if (v_.strategy == Strategy::ddp && !v_.overlap && bucket_size(l) > 0)
        comm_.all_reduce(grads_.data() + bucket_offset(l), bucket_size(l), bucket_offset(l));
      if (v_.strategy == Strategy::zero1) comm_.reduce_scatter(grads_.data() + slot, n, slot);
    }
    if (v_.strategy == Strategy::param_server) gather_to_server();
  }

  // Parameter server: workers send their gradient to rank 0, which sums them in rank order.
  void gather_to_server() {
    if (comm_.skip || p_ == 1) return;
    const size_t n = s_.n_params();
    t_.set_phase("ps-gradients");
    T* g = comm_.to_host(grads_.data(), n, 0);
    if (r_ == 0) {
      T* buf = ps_recv_.data();
      for (int w = 1; w < p_; ++w) {
        t_.recv(buf, n * sizeof(T), w);
        comm::reduce_into(g, buf, n, comm::Op::sum);
      }
    } else {
      t_.send(g, n * sizeof(T), 0);
    }
    comm_.to_dev(grads_.data(), g, n);
  }

  void optimizer_step() {
    if (skip_compute_) return;
    const int L = s_.layers();
    switch (v_.strategy) {
      case Strategy::ddp:
        adam_update<T>(params_.data(), grads_.data(), m_.data(), v_m_.data(), s_.n_params(), cfg_, step_);
        break;
      case Strategy::param_server:
        if (r_ == 0) adam_update<T>(params_.data(), grads_.data(), m_.data(), v_m_.data(), s_.n_params(), cfg_, step_);
        break;
      case Strategy::zero3:
        adam_update<T>(params_.data(), grads_.data(), m_.data(), v_m_.data(), shard_n_, cfg_, step_);
        break;
      case Strategy::zero1:
      case Strategy::zero2:
        if (v_.offload) {
          offloaded_update();
          break;
        }
        for (int l = 1; l <= L; ++l) {
          const size_t gofs = v_.strategy == Strategy::zero1 ? s_.block_offset(l) + cb(l) : shard_off(l);
          adam_update<T>(params_.data() + s_.block_offset(l) + cb(l), grads_.data() + gofs, m_.data() + shard_off(l),
                         v_m_.data() + shard_off(l), chunk_size(l), cfg_, step_);
        }
        break;
    }
    Kokkos::fence();
  }

  // ZeRO-Offload: the gradient shard goes to the host, Adam runs there on the
  // fp32 master shard, and the updated shard comes back (2 shard copies per step).
  void offloaded_update() {
    Kokkos::deep_copy(gh_, DevSpan<T>(grads_.data(), shard_n_));
    host_link_bytes_ += shard_n_ * sizeof(T);
    adam_update<T, Kokkos::DefaultHostExecutionSpace>(master_.data(), gh_.data(), mh_.data(), vh_.data(), shard_n_,
                                                      cfg_, step_);
    Kokkos::DefaultHostExecutionSpace().fence();
    for (int l = 1; l <= s_.layers(); ++l)
      Kokkos::deep_copy(DevSpan<T>(params_.data() + s_.block_offset(l) + cb(l), chunk_size(l)),
                        HostSpan<T>(master_.data() + shard_off(l), chunk_size(l)));
    host_link_bytes_ += shard_n_ * sizeof(T);
  }

  // Every rank needs the updated full parameters for the next forward pass
  // (except under ZeRO-3, which gathers them on demand).
  void after_update() {
    if (comm_.skip || p_ == 1) return;
    if (v_.strategy == Strategy::zero1 || v_.strategy == Strategy::zero2) {
      for (int l = 1; l <= s_.layers(); ++l)
        comm_.all_gather(params_.data() + s_.block_offset(l), s_.block_size(l), s_.block_offset(l));
    } else if (v_.strategy == Strategy::param_server) {
      const size_t n = s_.n_params();
      t_.set_phase("ps-parameters");
      T* h = comm_.to_host(params_.data(), n, 0);
      if (r_ == 0)
        for (int w = 1; w < p_; ++w) t_.send(h, n * sizeof(T), w);
      else
        t_.recv(h, n * sizeof(T), 0);
      comm_.to_dev(params_.data(), h, n);
    }
  }

  MlpShape s_;
  int B_;
  AdamConfig cfg_;
  Variant v_;
  comm::Transport& t_;
  int p_, r_;
  size_t bl_;
  std::vector<size_t> chunk_begin_, chunk_size_, shard_off_;
  std::vector<int> bucket_hi_;
  size_t shard_n_ = 0;
  MemoryTracker mem_;
  DpComm<T> comm_;
  Vec<T> params_, grads_, m_, v_m_, Yt_;
  Vec<T> dZ_[2];
  std::vector<Vec<T>> A_, Z_, gathered_, layer_grad_;
  Kokkos::View<T*, Kokkos::HostSpace> ps_recv_, mh_, vh_, gh_, master_;
  std::vector<std::unique_ptr<NbRing<T>>> gather_ring_, grad_ring_;
  int step_ = 0;
  double host_link_bytes_ = 0;
  PhaseClock clock_;
  bool skip_compute_ = false;
};

}  // namespace sp::dp
