#pragma once
// oneDNN convolution (the CPU vendor baseline) on caller-owned host memory,
// NCHW activations and (g)oihw weights, bias and activation as oneDNN
// post-ops, algorithm::convolution_direct (no Winograd: its different
// rounding would not fit the direct-sum error bound the checker uses).
// Only declared when the build has oneDNN (SP_HAVE_ONEDNN).
#include <memory>
#include <string>

#include "kernels/conv/conv_spec.hpp"

namespace sp::conv {

class OnednnConv {
 public:
  OnednnConv(const ConvSpec& s, int n, int h, int w, const float* in, const float* wts, const float* bias, float* out);
  ~OnednnConv();
  void run();
  std::string impl() const;  // the implementation oneDNN picked, e.g. "gemm:jit"

 private:
  struct Impl;
  std::unique_ptr<Impl> p_;
};

}  // namespace sp::conv
