#pragma once
// One convolution layer as data: the single description every kernel, the
// reference, oneDNN, the parameter/FLOP counters and the receptive-field
// composition read. NCHW activations, OIHW weights (groups split C_in and
// C_out into g equal slices, weights [C_out][C_in/g][kh][kw]).
#include <Kokkos_Macros.hpp>
#include <cstdint>
#include <string>

namespace sp::conv {

enum class Act { none, relu, sigmoid };

inline const char* to_string(Act a) { return a == Act::relu ? "relu" : a == Act::sigmoid ? "sigmoid" : "none"; }

struct ConvSpec {
  int c_in = 1, c_out = 1;
  int kh = 1, kw = 1;
  int stride = 1;
  int pad_h = 0, pad_w = 0;
  int groups = 1;
  bool bias = false;
  Act act = Act::none;

  KOKKOS_INLINE_FUNCTION int cin_g() const { return c_in / groups; }
  KOKKOS_INLINE_FUNCTION int cout_g() const { return c_out / groups; }
  KOKKOS_INLINE_FUNCTION int out_h(int h) const { return (h + 2 * pad_h - kh) / stride + 1; }
  KOKKOS_INLINE_FUNCTION int out_w(int w) const { return (w + 2 * pad_w - kw) / stride + 1; }
  // Terms summed per output element: the accumulation length L of the error bound.
  KOKKOS_INLINE_FUNCTION int64_t accumulation_length() const { return int64_t(cin_g()) * kh * kw + (bias ? 1 : 0); }
  KOKKOS_INLINE_FUNCTION int64_t weight_count() const { return int64_t(c_out) * cin_g() * kh * kw; }
  // Multiply-adds per output element (a bias add counts as one more add).
  KOKKOS_INLINE_FUNCTION int64_t macs_per_output() const { return int64_t(cin_g()) * kh * kw; }
};

// Throws sp::InputError (one line) for a layer that cannot run on an
// h x w input: stride 0, negative padding, groups not dividing the channels,
// a kernel larger than the padded input.
void validate(const ConvSpec& s, int h, int w, const std::string& who);

// "3x3 64->64 s1 p1 g1" for notes and reports.
std::string describe(const ConvSpec& s);

}  // namespace sp::conv
