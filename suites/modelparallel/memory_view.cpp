// The memory view's formulas; see memory_view.hpp.
#include "suites/modelparallel/memory_view.hpp"

namespace sp::mp {

std::vector<RankMemory> memory_view(const ModelShape& s, const Parallelism& par) {
  const double psi = s.params(), nd = par.dp;
  const double P = 2, G = 2, K = 12;                  // bytes per parameter: fp16 params, fp16 grads, fp32 Adam state
  const double act1 = s.layers * s.act_per_layer(1);  // one micro-batch through the whole model, no TP
  std::vector<RankMemory> rows;
  rows.push_back({"single device", P * psi, G * psi, K * psi, act1});
  rows.push_back({"DDP, N_d=" + std::to_string(par.dp), P * psi, G * psi, K * psi, act1});
  rows.push_back({"ZeRO-1, N_d=" + std::to_string(par.dp), P * psi, G * psi, K * psi / nd, act1});
  rows.push_back({"ZeRO-2, N_d=" + std::to_string(par.dp), P * psi, G * psi / nd, K * psi / nd, act1});
  rows.push_back({"ZeRO-3, N_d=" + std::to_string(par.dp), P * psi / nd, G * psi / nd, K * psi / nd, act1});
  const double t = par.tp;
  rows.push_back(
      {"TP t=" + std::to_string(par.tp), P * psi / t, G * psi / t, K * psi / t, s.layers * s.act_per_layer(t)});
  // Pipeline rank 0: L/p layers; activation sets in flight (units of chunks of L/(p v) layers).
  const int sets = predicted_peak_stash(par.schedule, par.pp, par.m, par.v, 0);
  const double layers_per_set = s.layers / (par.pp * par.v);
  const std::string pp = to_string(par.schedule) + " p=" + std::to_string(par.pp) +
                         (par.v > 1 ? " v=" + std::to_string(par.v) : "") + " m=" + std::to_string(par.m);
  const double share = 1.0 / par.pp;
  rows.push_back({"PP " + pp + ", rank 0", P * psi * share, G * psi * share, K * psi * share,
                  sets * layers_per_set * s.act_per_layer(1)});
  rows.push_back({"TP t=" + std::to_string(par.tp) + " x PP " + pp, P * psi * share / t, G * psi * share / t,
                  K * psi * share / t, sets * layers_per_set * s.act_per_layer(t)});
  return rows;
}

}  // namespace sp::mp
