#pragma once
// One training step of the composed hybrid-parallel transformer on this rank:
// the pipeline schedule's F/B operations (make_schedule) over this rank's
// chunks, tensor-parallel blocks inside each chunk, activations and
// gradients sent point-to-point between stages, ZeRO stage 0..3 over the
// data-parallel group, Adam in T (the parameters are the master weights),
// optional activation checkpointing, in storage type T (float: fp32, double:
// fp64). Every buffer is a Tracked object, so
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
#include <vector>

#include "kernels/hybrid/block.hpp"
#include "kernels/hybrid/groups.hpp"
#include "kernels/hybrid/param_map.hpp"
#include "kernels/hybrid/tracked.hpp"
#include "kernels/nn/optim.hpp"
#include "scaleproof/measure.hpp"

namespace sp::hybrid {

struct StepCounters {
  comm::Traffic dp, tp, pp;  // bytes and messages each group's transport counted
  int64_t dp_collectives = 0, tp_collectives = 0;
  double busy_seconds = 0;  // in F and B operations
};

template <class T>
class HybridStep {
 public:
  // rank: this process's rank among the layout's l.world() ranks, which form
  // the world communicator (or `base`).
  HybridStep(const ModelShape& m, const Layout& l, int rank);
#ifdef SP_HAVE_MPI
  HybridStep(const ModelShape& m, const Layout& l, int rank, MPI_Comm base);
#endif

  void load();  // initial parameters, zero optimizer state, step count 0, counters and peaks reset
  void step();  // one training step

  const MemoryTracker& memory() const { return mem_; }
  StepCounters counters() const;
  const GridCoord& coord() const { return g_.coord; }

  // The parameters this rank holds (its ZeRO-3 shard, else its whole slice):
  // calls f(global layer, ParamPos, double value) for each.
  template <class F>
  void for_each_held(F&& f) const;

 private:
  // One (micro-batch, chunk) activation set: the chunk input at 0, then
  // either every block's BlockAct (no checkpointing) or the kept block
  // inputs and, on the model's last chunk, the chunk output.
  struct Set {
    Tracked<T> buf;
    T* x() const { return buf.data(); }
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
  void block_params_fill(T* dst, int q, int64_t lo, int64_t n) const;

  ModelShape m_;
  Layout l_;
  Groups g_;
  MemoryTracker mem_;
  GroupComm<T> dp_, tp_;
  mp::Schedule sched_;
  BlockShape k_;
  Rows rows_;
  int bpc_ = 0, chunks_ = 0, mbs_ = 0;
  int64_t pc_ = 0, shard_lo_ = 0, shard_n_ = 0, nh_ = 0;
  nn::AdamConfig adam_;
  int t_ = 0;
  std::vector<Tracked<T>> params_, grads_, m1_, m2_;          // per local chunk (full or shard, by stage)
  Tracked<T> gathered_, grad_tmp_;                            // ZeRO-3 params, ZeRO-2/3 gradient of the current op
  std::map<std::pair<int, int>, std::unique_ptr<Set>> sets_;  // (mb, chunk)
  std::vector<Tracked<T>> in_flight_;                         // sent messages of this step
  std::map<int, int> local_;                                  // hand-overs inside this rank: tag -> in_flight_ index
  Kokkos::View<T*> x_, y_;                                    // this replica's inputs and targets (data, not counted)
  double busy_ = 0;
  PhaseClock clock_;  // the harness's clock: busy time of F and B operations, pipeline waits
  int64_t t0_dp_ = 0, t0_tp_ = 0;
};

template <class T>
template <class F>
void HybridStep<T>::for_each_held(F&& f) const {
  for (int q = 0; q < l_.v; ++q) {
    const int c = g_.coord.pp + q * l_.pp;
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), params_[q].view());
    const int64_t lo = l_.zero_stage == 3 ? shard_lo_ : 0;
    for (size_t e = 0; e < h.size(); ++e) {
      const int64_t off = lo + int64_t(e);
      const int j = int(off / k_.elems());
      f(c * bpc_ + j, param_pos(k_, l_.tp, g_.coord.tp, off % k_.elems()), double(h(e)));
    }
  }
}

}  // namespace sp::hybrid
