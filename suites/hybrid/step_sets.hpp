#pragma once
// Elements of one copy of the buffers that step_gemm and step_attention
// cycle through (their `sets` copies): the size rule that the techniques'
// memory limits and the planner's verification (enough copies to leave
// the caches) both use.
namespace sp::hybrid {

// step_gemm: A (M x K), B (K x N), C (M x N).
inline double gemm_set_elements(double m, double n, double k) { return m * k + k * n + m * n; }

// step_attention: QKV and dQKV (b s x 3 heads d), O and dO (b s x heads d),
// P and dS (b heads s x s).
inline double attention_set_elements(double b, double s, double heads, double d) {
  return 2 * (3 * b * s * heads * d) + 2 * (b * s * heads * d) + 2 * (b * heads * s * s);
}

}  // namespace sp::hybrid
