#pragma once
// One training step of the composed hybrid-parallel transformer on this rank:
// the pipeline schedule's F/B operations (make_schedule) over this rank's
// chunks, tensor-parallel blocks inside each chunk, activations and
// gradients sent point-to-point between stages, ZeRO stage 0..3 over the
// data-parallel group, Adam, optional activation checkpointing, in storage
// type T. fp32 and fp64 (float, double): everything in T, Adam on the
// parameters themselves. fp16 and bf16 (mixed precision, Micikevicius et al.
// 2018): parameters, activations, checkpoints, pipeline messages and the
// tensor-parallel all-reduces in T (2 bytes); fp32 gradient accumulators,
// fp32 master weights and fp32 Adam moments (Megatron's 18 bytes per
// parameter); the loss gradient is multiplied by the dynamic loss scale S_t,
// the fp32 gradients are divided by it after the schedule, and a count of
// inf/NaN gradient elements summed over every rank decides for all of them
// whether Adam runs or the step is skipped (parameters, moments and Adam's
// step count unchanged, S_t halved; precision::GradScaler). After Adam the
// 16-bit working copy is the master rounded to nearest-even; ZeRO 1 and 2
// all-gather that copy, ZeRO 3 gathers it per operation. The master weights
// and Adam's moments are sharded from ZeRO 1 on and counted as optimizer
// state. Every buffer is a Tracked object, so
// memory per category is counted from what the step holds; traffic comes
// from the groups' transports.
//
// Memory rules the cost model restates (kernels/hybrid/cost_model.cpp):
//  - an activation set per (micro-batch, chunk) lives from its F to the end
//    of its B: the chunk input (n h) and, without checkpointing, every
//    block's BlockAct; with checkpointing every k, the inputs of blocks
//    k, 2k, ... of the chunk and, on the last chunk, its output;
//  - an F op with checkpointing holds a workspace of k BlockActs; a B op holds
//    BlockScratch plus two n h gradient buffers, and k BlockActs to recompute
//    into when checkpointing;
//  - every message (and every hand-over between chunks of one rank) is copied
//    into a comm buffer held until the end of the step's schedule (a send
//    buffer may only be reused once the send completed);
//  - ZeRO: stage >= 1 shards Adam's m and v, stage >= 2 the gradients (a B op
//    holds its chunk's full gradient until its reduce-scatter), stage 3 the
//    parameters (an F or B op holds its chunk's gathered parameters).
#include <map>
#include <memory>
#include <type_traits>
#include <vector>

#include "kernels/hybrid/block.hpp"
#include "kernels/hybrid/groups.hpp"
#include "kernels/hybrid/param_map.hpp"
#include "kernels/hybrid/tracked.hpp"
#include "kernels/nn/optim.hpp"
#include "kernels/precision/loss_scaler.hpp"
#include "scaleproof/measure.hpp"

namespace sp::hybrid {

// The layout's storage type of a step's element type.
template <class T>
constexpr StorageType storage_of() {
  if constexpr (std::is_same<T, double>::value)
    return StorageType::fp64;
  else if constexpr (std::is_same<T, precision::fp16_t>::value)
    return StorageType::fp16;
  else if constexpr (std::is_same<T, precision::bf16_t>::value)
    return StorageType::bf16;
  else
    return StorageType::fp32;
}

struct StepCounters {
  comm::Traffic dp, tp, pp;  // bytes and messages each group's transport counted
  int64_t dp_collectives = 0, tp_collectives = 0;
  double busy_seconds = 0;       // in F and B operations
  double optimizer_seconds = 0;  // in the phase after the schedule: ZeRO 0/1 gradient reductions, Adam, all-gathers
};

template <class T>
class HybridStep {
  using A = typename nn::AccOf<T>::type;                      // gradients, Adam, master weights
  static constexpr bool kMixed = !std::is_same<T, A>::value;  // 16-bit storage

 public:
  // rank: this process's rank among the layout's l.world() ranks, which form
  // the world communicator (or `base`).
  HybridStep(const ModelShape& m, const Layout& l, int rank);
#ifdef SP_HAVE_MPI
  HybridStep(const ModelShape& m, const Layout& l, int rank, MPI_Comm base);
#endif

  void load();  // initial parameters, zero optimizer state, step count 0, then start_counting()
  // Traffic, collective counts, busy time and memory peaks from zero; the
  // training state (parameters, optimizer, loss scale, step count) is kept,
  // so the next steps continue training as a training loop's do.
  void start_counting();
  void step();  // one training step

  // The one-rank reference of layout `of` (docs/hybrid.md, "16-bit storage"): this step must run one_rank's layout of
  // it (one rank, one chunk, of.dp x of.micro_batches micro-batches, the same ZeRO stage). It then adds every sum that
  // `of` splits over ranks in `of`'s order: the four tensor-parallel products of each block as of.tp partial products
  // added in the ring's order (block_forward's split), and the gradients of
  // of.dp replicas - each accumulated over its own micro-batches as that
  // replica does - added in the data-parallel ring's order of every element
  // (its ring chunk in `of`'s pipeline chunk and tensor-parallel slice), after
  // the schedule (ZeRO 0, 1) or per micro-batch (ZeRO 2, 3). Micro-batch
  // i runs replica i mod of.dp's micro-batch i / of.dp. Call before load().
  // The extra buffers are the reference's, not the step's: not counted.
  void reproduce_order_of(const Layout& of);

  // Loss scaling of 16-bit storage (ignored for fp32 and fp64): the scaler's
  // settings, applied by the next load().
  void set_scaler(const precision::ScalerConfig& c) { scaler_cfg_ = c; }
  const precision::GradScaler& scaler() const { return scaler_; }
  int skipped_steps() const { return skipped_; }
  // The loss is w/(2B) sum |y - t|^2 (default w = 1): a small w makes every
  // gradient small, which is how tests put gradients below fp16's range.
  void set_loss_weight(double w) { loss_weight_ = w; }
  // Fault injection for tests (16-bit storage, where the check runs): the
  // next step's local fp32 gradient gets one infinite element on this rank
  // before the inf/NaN check.
  void inject_nonfinite() { inject_ = true; }

  const MemoryTracker& memory() const { return mem_; }
  StepCounters counters() const;
  const GridCoord& coord() const { return g_.coord; }

  // The parameters this rank holds (its ZeRO-3 shard, else its whole slice),
  // in the storage type: calls f(global layer, ParamPos, double value) for each.
  template <class F>
  void for_each_held(F&& f) const;
  // The fp32 master weights this rank holds (its shard from ZeRO 1 on) for
  // 16-bit storage; the same as for_each_held otherwise.
  template <class F>
  void for_each_master(F&& f) const;

 private:
  // One (micro-batch, chunk) activation set: the chunk input at 0, then
  // either every block's BlockAct (no checkpointing) or the kept block
  // inputs and, on the model's last chunk, the chunk output.
  struct Set {
    Tracked<T> buf;
    int64_t x_off = 0;  // the chunk input: after the BlockActs (aligned first), or first with checkpointing
    T* x() const { return buf.data() + x_off; }
  };
  void init();                                          // the constructors' common part
  int local(int chunk) const { return chunk / l_.pp; }  // index of a chunk among this rank's
  int owner(int chunk) const { return chunk % l_.pp; }
  int tag(bool grad, int mb, int chunk) const { return (grad ? 1 : 0) + 2 * (mb * chunks_ + chunk); }
  void forward(int mb, int c);
  void backward(int mb, int c);
  void optimizer();
  T* chunk_params(int q);  // gathered (ZeRO-3) or held
  // A message for chunk `to_chunk` (its input activation or its output
  // gradient), copied into a comm buffer held until the end of the schedule.
  void send(bool grad, int mb, int to_chunk, const T* x);
  void receive(bool grad, int mb, int c, int from_chunk, T* x);
  template <class U>
  void block_params_fill(U* dst, int q, int64_t lo, int64_t n) const;
  template <class V, class F>
  void each(const std::vector<V>& bufs, int64_t lo, F&& f) const;
  bool unscale_and_check();           // 16-bit: true when every rank's gradients are finite
  int64_t data_offset(int mb) const;  // where micro-batch mb's rows start in x_ and y_
  void combine_replicas();            // reproduce_order_of: grads := the ring's sum of the replicas' gradients

  ModelShape m_;
  Layout l_;
  Groups g_;
  MemoryTracker mem_;
  GroupComm<A> dp_;   // gradient reductions (fp32 for 16-bit storage)
  GroupComm<T> dpw_;  // ZeRO 1-3 all-gathers of the stored parameters
  GroupComm<T> tp_;
  mp::Schedule sched_;
  BlockShape k_;
  Rows rows_;
  int bpc_ = 0, chunks_ = 0, mbs_ = 0;
  int64_t pc_ = 0, shard_lo_ = 0, shard_n_ = 0, nh_ = 0;
  nn::AdamConfig adam_;
  int t_ = 0;
  std::vector<Tracked<T>> params_;                            // per local chunk (full or shard, by stage)
  std::vector<Tracked<A>> grads_, m1_, m2_;                   // per local chunk (full or shard, by stage)
  std::vector<Tracked<float>> master_;                        // 16-bit storage: fp32 master weights
  Tracked<T> gathered_;                                       // ZeRO-3 parameters of the current op
  Tracked<A> grad_tmp_;                                       // ZeRO-2/3 gradient of the current op
  std::map<std::pair<int, int>, std::unique_ptr<Set>> sets_;  // (mb, chunk)
  std::vector<Tracked<T>> in_flight_;                         // sent messages of this step
  std::map<int, int> local_;                                  // hand-overs inside this rank: tag -> in_flight_ index
  Kokkos::View<T*> x_, y_;                                    // this replica's inputs and targets (data, not counted)
  precision::ScalerConfig scaler_cfg_;
  precision::GradScaler scaler_;
  int skipped_ = 0;
  double loss_weight_ = 1;
  bool inject_ = false;
  double busy_ = 0, optim_ = 0;
  int split_ = 1, replicas_ = 1;      // reproduce_order_of: tensor-parallel split, data-parallel replicas
  Kokkos::View<A*> replica_g_;        // the replicas' gradients, pc_ each
  Kokkos::View<int*> replica_chunk_;  // the data-parallel ring chunk of each parameter
  Kokkos::View<A*> replica_sum_;      // ZeRO 2, 3: one micro-batch's sum over the replicas
  int next_b_ = 0;                    // ZeRO 2, 3: the micro-batch the next B op must run
  PhaseClock clock_;                  // the harness's clock: busy time of F and B operations, pipeline waits
  int64_t t0_dp_ = 0, t0_tp_ = 0;
};

template <class T>
template <class V, class F>
void HybridStep<T>::each(const std::vector<V>& bufs, int64_t lo, F&& f) const {
  for (int q = 0; q < l_.v; ++q) {
    const int c = g_.coord.pp + q * l_.pp;
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), bufs[size_t(q)].view());
    for (size_t e = 0; e < h.size(); ++e) {
      const int64_t off = lo + int64_t(e);
      const int j = int(off / k_.elems());
      f(c * bpc_ + j, param_pos(k_, l_.tp, g_.coord.tp, off % k_.elems()), double(nn::load(h(e))));
    }
  }
}

template <class T>
template <class F>
void HybridStep<T>::for_each_held(F&& f) const {
  each(params_, l_.zero_stage == 3 ? shard_lo_ : 0, f);
}

template <class T>
template <class F>
void HybridStep<T>::for_each_master(F&& f) const {
  if constexpr (kMixed)
    each(master_, l_.zero_stage >= 1 ? shard_lo_ : 0, f);
  else
    for_each_held(f);
}

}  // namespace sp::hybrid
