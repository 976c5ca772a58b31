#pragma once
// Analytical memory and traffic of data parallelism and ZeRO stages 1-3
// (Rajbhandari et al., SC'20; docs/dataparallel.md, "Data parallelism and
// ZeRO"). One formula structure for every precision convention:
//
//   bytes/device = P*Psi*[full params] + G*Psi*[full grads] + K*Psi*[full optimizer]
//                  with each term divided by N_d once its stage shards it;
//   traffic/step = 2 Psi elements (DDP, ZeRO-1, ZeRO-2), 3 Psi (ZeRO-3).
//
// (P, G, K) are bytes per parameter: the paper's mixed precision is (2, 2, 12)
// (fp16 params and grads; fp32 master params, momentum and variance); plain
// fp32 Adam training, what the suite's MLP runs, is (4, 4, 8) (the fp32
// params are the master copy, so K holds only m and v); fp64 is (8, 8, 16).
#include <string>

namespace sp::dp {

struct Precision {
  std::string name;
  double param = 0, grad = 0, optim = 0;       // bytes per parameter (P, G, K)
  double comm_param() const { return param; }  // all-gathers move parameters in their storage type
  double comm_grad() const { return grad; }    // reduce-scatters / all-reduces move gradients
};

inline Precision mixed_precision() { return {"mixed", 2, 2, 12}; }
inline Precision fp32_adam() { return {"fp32", 4, 4, 8}; }
inline Precision fp64_adam() { return {"fp64", 8, 8, 16}; }

enum class Stage { ddp, zero1, zero2, zero3 };
inline const char* stage_name(Stage s) {
  switch (s) {
    case Stage::ddp: return "DDP";
    case Stage::zero1: return "ZeRO-1 (P_os)";
    case Stage::zero2: return "ZeRO-2 (P_os+g)";
    case Stage::zero3: return "ZeRO-3 (P_os+g+p)";
  }
  return "?";
}

struct StageCost {
  double params = 0, grads = 0, optim = 0;  // bytes per device, per category
  double traffic = 0;                       // bytes sent per device per step
  double total() const { return params + grads + optim; }
};

// ring = true uses the exact ring volume (N_d-1)/N_d per phase instead of the
// paper's large-N_d limit of 1; the measured counters follow the exact one.
inline StageCost zero_cost(Stage s, double psi, double nd, const Precision& pr, bool ring = false) {
  const bool os = s != Stage::ddp, g = s == Stage::zero2 || s == Stage::zero3, p = s == Stage::zero3;
  StageCost c;
  c.params = pr.param * psi / (p ? nd : 1);
  c.grads = pr.grad * psi / (g ? nd : 1);
  c.optim = pr.optim * psi / (os ? nd : 1);
  const double phase = ring ? (nd - 1) / nd : 1.0;
  // Gradients: one reduce-scatter (+ an all-gather of grads for DDP, of params for ZeRO-1/2);
  // ZeRO-3 all-gathers the parameters twice (forward and backward).
  c.traffic =
      phase * psi * (pr.comm_grad() + (p ? 2 * pr.comm_param() : (s == Stage::ddp ? pr.comm_grad() : pr.comm_param())));
  return c;
}

// Parameter server: the server receives N_d-1 gradient copies and sends N_d-1
// parameter copies per step; a worker sends Psi and receives Psi.
inline double param_server_load(double psi, double nd, double elem_bytes) { return 2 * (nd - 1) * psi * elem_bytes; }

}  // namespace sp::dp
