#pragma once
// Executes one training step of a pipeline schedule over a Transport: each
// rank walks its own list of F/B operations (schedule.hpp); activations go
// downstream and gradients upstream as tagged point-to-point messages (one
// per micro-batch and chunk boundary; a boundary inside one rank is a local
// hand-over, as in Megatron at p = 1). Receives block the rank (that wait is
// the bubble), sends are non-blocking and completed at the end of the step.
// Every receive of the step is posted at its start, and the executor drives
// MPI progress between layers, so a large (rendezvous) message moves while
// its sender computes instead of waiting for the sender's next MPI call.
//
// Measured per rank: busy time (compute of its operations), step time (from
// the common start to its last operation), the timeline of operations, the
// peak number of (micro-batch, chunk) activation sets held and their
// elements, and the point-to-point messages and bytes sent.
#include <cstdint>
#include <map>
#include <vector>

#include "kernels/comm/transport.hpp"
#include "kernels/modelparallel/pipeline_layer.hpp"
#include "kernels/modelparallel/schedule.hpp"

namespace sp::mp {

struct OpTime {
  Op op;
  double t0, t1;  // compute start and end, seconds since the step's start
};

struct PipeStats {
  double busy = 0, step = 0;
  int peak_stash = 0;           // (micro-batch, chunk) activation sets held at once
  size_t peak_stash_elems = 0;  // their elements
  uint64_t messages_sent = 0, bytes_sent = 0, messages_recv = 0, bytes_recv = 0;
  std::vector<OpTime> timeline;
};

class PipelineExecutor {
 public:
  // layers: the whole model's layer count; rows x h activations per micro-batch.
  PipelineExecutor(comm::Transport& t, Schedule s, int layers, int h, int rows);

  // Weights of global layer l (all ranks call with the same generator; each keeps its own layers).
  template <class Gen>
  void init_weights(Gen&& weight_of_layer) {
    for (auto& [c, ls] : chunks_)
      for (int j = 0; j < static_cast<int>(ls.size()); ++j) {
        const int l = chunk_layers(layers_, sched_.chunks(), c).first + j;
        ls[j].W = weight_of_layer(l);
        ls[j].dW = Mat("dW", h_, h_);
      }
  }

  // One step. inputs[mb] are read on the rank owning chunk 0, out_grads[mb]
  // on the rank owning the last chunk. Afterwards outputs()[mb] (last chunk's
  // rank) and input_grads()[mb] (chunk 0's rank) hold the results and the
  // weight gradients are accumulated over all micro-batches.
  PipeStats step(const std::vector<Mat>& inputs, const std::vector<Mat>& out_grads);

  const std::vector<Mat>& outputs() const { return outputs_; }
  const std::vector<Mat>& input_grads() const { return input_grads_; }
  // This rank's layers: global layer index -> layer.
  std::map<int, PipeLayer*> layers();
  size_t param_elems() const;

 private:
  int owner(int chunk) const { return chunk % sched_.p; }
  int tag(Kind k, int mb, int chunk) const { return (k == Kind::B ? 1 : 0) + 2 * (mb * sched_.chunks() + chunk); }
  void post_receives();
  Mat receive(Kind k, int mb, int chunk, int from);
  void deliver(Kind k, int mb, int chunk, int to, const Mat& m);
  void progress();  // lets pending messages move (MPI progress), between layers

  using HostMat = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  struct Pending {
    int handle;
    HostMat buf;
  };

  comm::Transport& t_;
  Schedule sched_;
  int layers_, h_, rows_, rank_;
  std::map<int, std::vector<PipeLayer>> chunks_;  // this rank's chunks
  std::map<std::pair<int, int>, Mat> local_;      // hand-overs inside this rank, keyed (tag, 0)
  std::map<int, Pending> posted_;                 // pre-posted receives by tag
  std::vector<Pending> in_flight_;                // sends not yet known complete
  std::vector<Mat> outputs_, input_grads_;
};

// Largest tag the executor uses must fit MPI's guaranteed tag range (32767).
inline bool pipeline_tags_fit(int m, int chunks) { return 2 * m * chunks < 32767; }

}  // namespace sp::mp
