#pragma once
// The machine figures the planner's time model needs (GEMM rate, alpha,
// beta, gamma), from named values or from what the project writes: a results
// folder (its bench.json: the project's GEMM and the ring all-reduce's
// calibration), a `qualify` folder (the results folder it judged), or a plan
// written by --json (its "machine" object).
#include <nlohmann/json.hpp>
#include <string>

#include "kernels/hybrid/time_model.hpp"

namespace sp::hybrid::plan {

// One link for every group. gamma_gbs = 0: reductions cost nothing beyond
// their bytes sent. Throws InputError unless gemm > 0, alpha >= 0, beta > 0.
MachineFigures machine_from_figures(double gemm_gflops, double alpha_us, double beta_gbs, double gamma_gbs);
// Throws InputError naming the file (and the field) when it holds no usable figures.
MachineFigures machine_from_file(const std::string& path);
// The best median rate of the project's GEMM (technique gemm, variant kokkos)
// over all shapes, and the best at each shape (M, N, K); as the element-wise
// rate the best elementwise_bytes_per_s a case reported (the step's layers),
// else the best STREAM triad bandwidth (0 when neither ran); as the
// optimizer's the best optimizer_bytes_per_s (0 when none); and the ring
// all-reduce's calibration: alpha at its smallest count, beta and gamma at
// its largest.
MachineFigures machine_from_bench(const nlohmann::json& bench, const std::string& what);

nlohmann::json to_json(const MachineFigures& m);
std::string describe(const MachineFigures& m);

}  // namespace sp::hybrid::plan
