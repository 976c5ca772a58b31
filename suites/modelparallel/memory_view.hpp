#pragma once
// The memory view: bytes per rank of parameters, gradients, optimizer
// state and activations of a GPT-style model (L layers of 12 h^2 parameters,
// no embeddings, biases or layer-norm weights) under data, tensor and
// pipeline parallelism, from the formulas of docs/modelparallel.md:
//  - model states, mixed-precision Adam: 2 + 2 + K=12 bytes per parameter
//    (Rajbhandari et al.), sharded by ZeRO stage over N_d, split by t (TP)
//    and by the layers a pipeline rank holds;
//  - activations per layer and micro-batch, 16-bit (Korthikanti et al. 2022,
//    Table 2): sbh(34 + 5as/h) unsplit, sbh(10 + 24/t + 5as/(ht)) with TP;
//    a pipeline rank holds its layers' activations for as many micro-batches
//    as the schedule keeps in flight (GPipe m, 1F1B p, interleaved
//    2(p-1)+(v-1)p+1 chunks of L/(pv) layers, at rank 0).
#include <string>
#include <vector>

#include "kernels/modelparallel/schedule.hpp"

namespace sp::mp {

struct ModelShape {
  double layers = 96, hidden = 12288, heads = 96, seq = 2048, micro_batch = 1;
  double params() const { return layers * 12 * hidden * hidden; }
  // Korthikanti Table 2, bytes per layer and micro-batch at tensor-parallel degree t.
  double act_per_layer(double t) const {
    const double sbh = seq * micro_batch * hidden;
    return sbh * (10 + 24 / t + 5 * heads * seq / (hidden * t));
  }
};

struct RankMemory {
  std::string layout;
  double params = 0, grads = 0, optim = 0, acts = 0;
  double total() const { return params + grads + optim + acts; }
};

struct Parallelism {
  int dp = 1, tp = 1, pp = 1, v = 1, m = 1;
  ScheduleKind schedule = ScheduleKind::one_f_one_b;
};

// One row per layout: single device, DDP and ZeRO-1/2/3 over dp, TP over tp,
// PP over pp (rank 0, the most loaded), TP x PP.
std::vector<RankMemory> memory_view(const ModelShape& s, const Parallelism& par);

}  // namespace sp::mp
