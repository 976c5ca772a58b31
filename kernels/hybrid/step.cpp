#include "kernels/hybrid/step.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include "kernels/comm/ring.hpp"
#include "kernels/hybrid/ring_order.hpp"
#include "kernels/nn/activations.hpp"
#include "kernels/nn/loss.hpp"
#include "kernels/precision/loss_scaler.hpp"

namespace sp::hybrid {

namespace {
template <class T>
using Span = Kokkos::View<T*, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
void copy(T* dst, const T* src, int64_t n) {
  Kokkos::deep_copy(Span<T>(dst, size_t(n)), Span<T>(const_cast<T*>(src), size_t(n)));
}
}  // namespace

template <class T>
HybridStep<T>::HybridStep(const ModelShape& m, const Layout& l, int rank)
    : m_(m), l_(l), g_(l, rank), dp_(g_.dp(), mem_), dpw_(g_.dp(), mem_), tp_(g_.tp(), mem_) {
  init();
}

#ifdef SP_HAVE_MPI
template <class T>
HybridStep<T>::HybridStep(const ModelShape& m, const Layout& l, int rank, MPI_Comm base)
    : m_(m), l_(l), g_(l, rank, base), dp_(g_.dp(), mem_), dpw_(g_.dp(), mem_), tp_(g_.tp(), mem_) {
  init();
}
#endif

template <class T>
void HybridStep<T>::init() {
  const ModelShape& m = m_;
  const Layout& l = l_;
  const std::string err = layout_error(m, l, l.world());
  if (!err.empty()) throw std::invalid_argument(err);
  if (l.storage != storage_of<T>())
    throw std::invalid_argument(std::string("hybrid: layout storage ") + to_string(l.storage) + " run by a " +
                                to_string(storage_of<T>()) + " step");
  sched_ = mp::make_schedule(l.schedule, l.pp, l.micro_batches, l.v);
  k_ = block_shape(m, l);
  mbs_ = l.micro_batch_size(m);
  rows_ = {mbs_, m.seq};
  bpc_ = blocks_per_chunk(m, l);
  chunks_ = l.pp * l.v;
  pc_ = int64_t(bpc_) * k_.elems();
  const comm::Partition part{size_t(pc_), l.dp};
  shard_lo_ = int64_t(part.begin(g_.coord.dp));
  shard_n_ = int64_t(part.size(g_.coord.dp));
  nh_ = int64_t(rows_.n()) * m.hidden;
  // This replica's samples: [dp_i B/dp, (dp_i + 1) B/dp), each seq rows of h.
  const int per = m.global_batch / l.dp;
  auto hx = Kokkos::View<T*, Kokkos::HostSpace>("hybrid_x", size_t(per) * m.seq * m.hidden);
  auto hy = Kokkos::View<T*, Kokkos::HostSpace>("hybrid_y", hx.size());
  for (int64_t r = 0; r < int64_t(per) * m.seq; ++r) {
    const int64_t grow = int64_t(g_.coord.dp) * per * m.seq + r;
    for (int j = 0; j < m.hidden; ++j) {
      hx(r * m.hidden + j) = nn::store_as<T>(init_value(0, Tensor::input, grow, j, 1), 0);
      hy(r * m.hidden + j) = nn::store_as<T>(init_value(0, Tensor::target, grow, j, 1), 0);
    }
  }
  x_ = Kokkos::create_mirror_view_and_copy(Kokkos::DefaultExecutionSpace::memory_space(), hx);
  y_ = Kokkos::create_mirror_view_and_copy(Kokkos::DefaultExecutionSpace::memory_space(), hy);
}

template <class T>
void HybridStep<T>::reproduce_order_of(const Layout& of) {
  const std::string err = layout_error(m_, of, of.world());
  if (!err.empty()) throw std::invalid_argument(err);
  if (l_.world() != 1 || l_.v != 1 || l_.micro_batches != of.dp * of.micro_batches || l_.zero_stage != of.zero_stage)
    throw std::invalid_argument("hybrid: reproduce_order_of needs the one-rank layout of the layout it reproduces");
  split_ = of.tp;
  replicas_ = of.dp;
  if (replicas_ == 1) return;
  replica_g_ = Kokkos::View<A*>("hybrid_replica_grads", size_t(replicas_) * size_t(pc_));
  replica_sum_ = Kokkos::View<A*>("hybrid_replica_sum", size_t(pc_));
  // Element e of this step's vector (block e / E of the model, offset e mod E
  // in the whole block): its tensor-parallel rank's offset in that rank's
  // block vector (layer-norm parameters sit at the same offset on every
  // rank), then its offset in its pipeline chunk's vector of P_c elements,
  // whose Partition{P_c, dp} chunk is the ring chunk that orders its sum.
  const BlockShape kl = block_shape(m_, of);
  const int bpc = blocks_per_chunk(m_, of);
  std::map<std::tuple<int, int64_t, int64_t>, int64_t> local;
  for (int r = 0; r < of.tp; ++r)
    for (int64_t off = 0; off < kl.elems(); ++off) {
      const ParamPos p = param_pos(kl, of.tp, r, off);
      local[{int(p.t), p.i, p.j}] = off;
    }
  const PartitionChunk chunk{size_t(bpc) * size_t(kl.elems()), of.dp};
  auto h = Kokkos::View<int*, Kokkos::HostSpace>("hybrid_replica_chunk", size_t(pc_));
  for (int64_t e = 0; e < pc_; ++e) {
    const int64_t b = e / k_.elems();
    const ParamPos p = param_pos(k_, 1, 0, e % k_.elems());
    h(size_t(e)) = chunk(size_t((b % bpc) * kl.elems() + local.at({int(p.t), p.i, p.j})));
  }
  replica_chunk_ = Kokkos::create_mirror_view_and_copy(Kokkos::DefaultExecutionSpace::memory_space(), h);
}

template <class T>
int64_t HybridStep<T>::data_offset(int mb) const {
  if (replicas_ == 1) return int64_t(mb) * nh_;
  const int per = l_.micro_batches / replicas_;  // micro-batches per replica, stored replica after replica
  return (int64_t(mb % replicas_) * per + mb / replicas_) * nh_;
}

namespace {
// Element e's ring chunk, from a table (a functor, not a lambda: a CUDA
// extended lambda may not be defined in a private member function).
struct ChunkTable {
  const int* ch;
  KOKKOS_INLINE_FUNCTION int operator()(size_t e) const { return ch[e]; }
};
}  // namespace

template <class T>
void HybridStep<T>::combine_replicas() {
  ring_order_sum(replica_g_.data(), replicas_, size_t(pc_), ChunkTable{replica_chunk_.data()},
                 l_.zero_stage >= 2 ? replica_sum_.data() : grads_[0].data());
  Kokkos::deep_copy(replica_g_, A(0));
}

// Initial values (fp32, model_init.hpp) rounded once into U.
template <class T>
template <class U>
void HybridStep<T>::block_params_fill(U* dst, int q, int64_t lo, int64_t n) const {
  const int c = g_.coord.pp + q * l_.pp;
  Kokkos::View<U*, Kokkos::HostSpace> h("hybrid_init", size_t(n));
  for (int64_t e = 0; e < n; ++e) {
    const int64_t off = lo + e;
    const ParamPos p = param_pos(k_, l_.tp, g_.coord.tp, off % k_.elems());
    h(e) = nn::store_as<U>(init_value(c * bpc_ + int(off / k_.elems()), p.t, p.i, p.j, p.rows), 0);
  }
  Kokkos::deep_copy(Span<U>(dst, size_t(n)), h);
}

template <class T>
void HybridStep<T>::load() {
  const bool shard_p = l_.zero_stage == 3, shard_g = l_.zero_stage >= 2, shard_o = l_.zero_stage >= 1;
  params_.clear(), grads_.clear(), m1_.clear(), m2_.clear(), master_.clear();
  for (int q = 0; q < l_.v; ++q) {
    params_.emplace_back(mem_, Mem::params, size_t(shard_p ? shard_n_ : pc_), "hybrid_params");
    block_params_fill(params_.back().data(), q, shard_p ? shard_lo_ : 0, shard_p ? shard_n_ : pc_);
    if constexpr (kMixed) {
      master_.emplace_back(mem_, Mem::optim, size_t(shard_o ? shard_n_ : pc_), "hybrid_master");
      block_params_fill(master_.back().data(), q, shard_o ? shard_lo_ : 0, shard_o ? shard_n_ : pc_);
    }
    grads_.emplace_back(mem_, Mem::grads, size_t(shard_g ? shard_n_ : pc_), "hybrid_grads");
    m1_.emplace_back(mem_, Mem::optim, size_t(shard_o ? shard_n_ : pc_), "hybrid_adam_m");
    m2_.emplace_back(mem_, Mem::optim, size_t(shard_o ? shard_n_ : pc_), "hybrid_adam_v");
  }
  scaler_ = precision::GradScaler(scaler_cfg_);
  skipped_ = 0;
  inject_ = false;
  t_ = 0;
  start_counting();
}

template <class T>
void HybridStep<T>::start_counting() {
  busy_ = optim_ = 0;
  dp_.collectives = dpw_.collectives = tp_.collectives = 0;
  g_.dp().reset_traffic(), g_.tp().reset_traffic(), g_.pp().reset_traffic();
  mem_.reset_peaks();
}

template <class T>
StepCounters HybridStep<T>::counters() const {
  StepCounters c;
  auto& g = const_cast<Groups&>(g_);
  c.dp = g.dp().total(), c.tp = g.tp().total(), c.pp = g.pp().total();
  c.dp_collectives = dp_.collectives + dpw_.collectives, c.tp_collectives = tp_.collectives;
  c.busy_seconds = busy_;
  c.optimizer_seconds = optim_;
  return c;
}

template <class T>
T* HybridStep<T>::chunk_params(int q) {
  if (l_.zero_stage < 3) return params_[q].data();
  gathered_ = Tracked<T>(mem_, Mem::params, size_t(pc_), "hybrid_gathered", false);
  copy(gathered_.data() + shard_lo_, params_[q].data(), shard_n_);
  dpw_.all_gather(gathered_.data(), size_t(pc_));
  return gathered_.data();
}

template <class T>
void HybridStep<T>::send(bool grad, int mb, int to_chunk, const T* x) {
  Tracked<T> buf(mem_, Mem::comm, size_t(nh_), "hybrid_msg", false);
  copy(buf.data(), x, nh_);
  Kokkos::fence();
  const int t = tag(grad, mb, to_chunk);
  if (owner(to_chunk) == g_.coord.pp)
    local_[t] = int(in_flight_.size());
  else
    g_.pp().isend(buf.data(), size_t(nh_) * sizeof(T), owner(to_chunk), t);
  in_flight_.push_back(std::move(buf));
}

template <class T>
void HybridStep<T>::receive(bool grad, int mb, int c, int from_chunk, T* x) {
  const int t = tag(grad, mb, c);
  if (owner(from_chunk) == g_.coord.pp) {
    copy(x, in_flight_.at(size_t(local_.at(t))).data(), nh_);
    return;
  }
  // The wait is the pipeline's bubble, not work: it is taken out of busy time.
  busy_ -= clock_.time("wait", [&] { g_.pp().wait(g_.pp().irecv(x, size_t(nh_) * sizeof(T), owner(from_chunk), t)); });
}

template <class T>
void HybridStep<T>::forward(int mb, int c) {
  const BlockAct a{k_, rows_, acc_elems<T>()};
  const int64_t E = a.elems(), k = l_.ckpt_every, q = local(c);
  const bool last = c == chunks_ - 1;
  auto set = std::make_unique<Set>();
  const int64_t keep = k > 0 ? (bpc_ - 1) / k : 0;
  const int64_t elems = k == 0 ? nh_ + bpc_ * E : nh_ * (1 + keep + (last ? 1 : 0));
  set->buf = Tracked<T>(mem_, Mem::activations, size_t(elems), "hybrid_act_set", false);
  set->x_off = k == 0 ? bpc_ * E : 0;
  T* X = set->x();
  if (c == 0)
    copy(X, x_.data() + data_offset(mb), nh_);
  else
    receive(false, mb, c, c - 1, X);
  const T* w = chunk_params(int(q));
  const T* out = nullptr;
  Tracked<T> ws;
  if (k == 0) {
    T* act = set->buf.data();
    for (int j = 0; j < bpc_; ++j)
      block_forward(a, w + j * k_.elems(), j == 0 ? X : act + (j - 1) * E + a.out(), act + j * E, tp_, split_);
    out = act + (bpc_ - 1) * E + a.out();
  } else {
    ws = Tracked<T>(mem_, Mem::activations, size_t(k * E), "hybrid_ckpt_ws", false);
    T* W = ws.data();
    for (int j = 0; j < bpc_; ++j) {
      const int jj = int(j % k);
      const T* in = j == 0 ? X : jj == 0 ? X + (j / k) * nh_ : W + (jj - 1) * E + a.out();
      block_forward(a, w + j * k_.elems(), in, W + jj * E, tp_, split_);
      if ((j + 1) % k == 0 && j + 1 < bpc_) copy(X + ((j + 1) / k) * nh_, W + jj * E + a.out(), nh_);
    }
    out = W + ((bpc_ - 1) % k) * E + a.out();
    if (last) copy(X + (1 + keep) * nh_, out, nh_);
  }
  if (!last) send(false, mb, c + 1, out);
  Kokkos::fence();
  ws.release();
  gathered_.release();
  sets_[{mb, c}] = std::move(set);
}

template <class T>
void HybridStep<T>::backward(int mb, int c) {
  const BlockAct a{k_, rows_, acc_elems<T>()};
  const BlockScratch sc{k_, rows_, acc_elems<T>()};
  const int64_t E = a.elems(), k = l_.ckpt_every, q = local(c);
  const bool last = c == chunks_ - 1;
  auto it = sets_.find({mb, c});
  if (it == sets_.end()) throw std::logic_error("hybrid: backward before forward");
  T* X = it->second->x();
  T* acts = it->second->buf.data();
  Tracked<T> scratch(mem_, Mem::activations, size_t(sc.elems() + 2 * nh_), "hybrid_bwd_scratch", false);
  T* cur = scratch.data() + sc.elems();
  T* other = cur + nh_;
  const int64_t keep = k > 0 ? (bpc_ - 1) / k : 0;
  if (last) {
    const T* out = k == 0 ? acts + (bpc_ - 1) * E + a.out() : X + (1 + keep) * nh_;
    // dL/dy = w (y - t) / B, times the loss scale with 16-bit storage (a
    // power of two: the constant is the fp32 w / B scaled exactly).
    const double scale = kMixed ? scaler_.scale() : 1.0;
    nn::mse_grad(out, y_.data() + data_offset(mb), cur, nh_, A(scale * (loss_weight_ / m_.global_batch)));
  } else {
    receive(true, mb, c, c + 1, cur);
  }
  const T* w = chunk_params(int(q));
  A* gw = grads_[q].data();
  if (replicas_ > 1) {  // reproduce_order_of: the replica's own gradient (from zero per op at ZeRO 2, 3)
    if (l_.zero_stage >= 2 && mb != next_b_++) throw std::logic_error("hybrid: B ops out of micro-batch order");
    gw = replica_g_.data() + int64_t(mb % replicas_) * pc_;
  } else if (l_.zero_stage >= 2) {
    // This op's own gradient, written (not added) by the blocks' backward: no zero fill first.
    grad_tmp_ = Tracked<A>(mem_, Mem::grads, size_t(pc_), "hybrid_grad_op", false);
    gw = grad_tmp_.data();
  }
  const bool accumulate = !(replicas_ == 1 && l_.zero_stage >= 2);
  const int64_t P = k_.elems();
  if (k == 0) {
    const T* act = acts;
    for (int j = bpc_ - 1; j >= 0; --j) {
      block_backward(a, w + j * P, gw + j * P, j == 0 ? X : act + (j - 1) * E + a.out(), act + j * E, cur, other,
                     scratch.data(), tp_, split_, accumulate);
      std::swap(cur, other);
    }
  } else {
    Tracked<T> ws(mem_, Mem::activations, size_t(k * E), "hybrid_ckpt_ws", false);
    T* W = ws.data();
    for (int64_t seg = (bpc_ - 1) / k; seg >= 0; --seg) {
      const int js = int(seg * k), je = int(std::min<int64_t>(js + k, bpc_));
      auto input = [&](int j) -> const T* { return j == js ? X + seg * nh_ : W + (j - js - 1) * E + a.out(); };
      for (int j = js; j < je; ++j) block_forward(a, w + j * P, input(j), W + (j - js) * E, tp_, split_);
      for (int j = je - 1; j >= js; --j) {
        block_backward(a, w + j * P, gw + j * P, input(j), W + (j - js) * E, cur, other, scratch.data(), tp_, split_,
                       accumulate);
        std::swap(cur, other);
      }
    }
    Kokkos::fence();
  }
  if (c > 0) send(true, mb, c - 1, cur);
  if (replicas_ > 1 && l_.zero_stage >= 2) {
    // Each replica's reduce-scatter of this micro-batch's gradient, added to
    // the accumulator, once the last replica's gradient is formed.
    if (mb % replicas_ == replicas_ - 1) {
      combine_replicas();
      nn::add(grads_[q].data(), replica_sum_.data(), grads_[q].data(), pc_);
      Kokkos::fence();
    }
  } else if (l_.zero_stage >= 2) {
    dp_.reduce_scatter(gw, size_t(pc_));
    nn::add(grads_[q].data(), gw + shard_lo_, grads_[q].data(), shard_n_);
    Kokkos::fence();
    grad_tmp_.release();
  }
  Kokkos::fence();
  gathered_.release();
  sets_.erase(it);
}

// 16-bit storage: the accumulated fp32 gradients (scaled by S_t) divided by
// S_t - exact, a power of two - and their inf/NaN elements counted; the sum
// over every rank of the layout decides for all of them.
template <class T>
bool HybridStep<T>::unscale_and_check() {
  const A inv = A(1.0 / scaler_.scale());
  long long bad = 0;
  if (replicas_ > 1 && l_.zero_stage < 2) {  // each replica unscales and counts its own, then the ring adds
    nn::scale(replica_g_.data(), inv, int64_t(replica_g_.size()));
    Kokkos::fence();
    bad += precision::count_nonfinite<A>(replica_g_);
    combine_replicas();
    return g_.sum_over_layout(bad) == 0;
  }
  for (auto& g : grads_) {
    nn::scale(g.data(), inv, int64_t(g.size()));
    if (inject_ && g.size() > 0) Kokkos::deep_copy(Kokkos::subview(g.view(), 0), A(INFINITY));
    inject_ = false;
    Kokkos::fence();
    bad += precision::count_nonfinite<A>(g.view());
  }
  return g_.sum_over_layout(bad) == 0;
}

template <class T>
void HybridStep<T>::optimizer() {
  next_b_ = 0;
  if constexpr (!kMixed)
    if (replicas_ > 1 && l_.zero_stage < 2) combine_replicas();
  if constexpr (kMixed) {
    if (!scaler_.update(!unscale_and_check())) {  // skipped: parameters, moments, t unchanged; S_t halved
      ++skipped_;
      for (auto& g : grads_) Kokkos::deep_copy(g.view(), A(0));
      return;
    }
  }
  ++t_;
  const int st = l_.zero_stage;
  for (int q = 0; q < l_.v; ++q) {
    T* p = params_[q].data();
    A* g = grads_[q].data();
    size_t n = size_t(pc_);
    if (st == 0) dp_.all_reduce(g, n);
    if (st == 1) dp_.reduce_scatter(g, n), g += shard_lo_;
    if (st >= 1) n = size_t(shard_n_);
    if (st == 1 || st == 2) p += shard_lo_;
    if constexpr (kMixed) {
      float* w = master_[q].data();  // the master covers what this rank updates
      nn::adam_update<float>(w, g, m1_[q].data(), m2_[q].data(), n, adam_, t_);
      nn::cast_to<T>(w, p, n);
    } else {
      nn::adam_update<T>(p, g, m1_[q].data(), m2_[q].data(), n, adam_, t_);
    }
    Kokkos::fence();
    if (st == 1 || st == 2) dpw_.all_gather(params_[q].data(), size_t(pc_));
    Kokkos::deep_copy(grads_[q].view(), A(0));
  }
}

template <class T>
void HybridStep<T>::step() {
  for (const mp::Op& op : sched_.ranks[size_t(g_.coord.pp)])
    busy_ += clock_.time("op", [&] {
      if (op.kind == mp::Kind::F)
        forward(op.mb, op.chunk);
      else
        backward(op.mb, op.chunk);
      Kokkos::fence();
    });
  g_.pp().wait_all();
  in_flight_.clear();
  local_.clear();
  optim_ += clock_.time("optimizer", [&] {
    optimizer();
    Kokkos::fence();
  });
}

template class HybridStep<float>;
template class HybridStep<double>;
template class HybridStep<precision::fp16_t>;
template class HybridStep<precision::bf16_t>;

}  // namespace sp::hybrid
