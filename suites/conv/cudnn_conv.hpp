#pragma once
// cuDNN convolution (the GPU vendor baseline) on caller-owned device memory:
// NCHW, IMPLICIT_GEMM (a direct sum: no Winograd or FFT, whose rounding the
// direct-sum bound does not cover), FMA math (no TF32), bias and activation
// applied after. Built only with SP_HAVE_CUDNN (CUDA builds); compiled here,
// run only on a GPU machine.
#include <memory>

#include "kernels/conv/conv_spec.hpp"

namespace sp::conv {

class CudnnConv {
 public:
  CudnnConv(const ConvSpec& s, int n, int h, int w, const float* in, const float* wts, const float* bias, float* out);
  ~CudnnConv();
  void run();

 private:
  struct Impl;
  std::unique_ptr<Impl> p_;
};

}  // namespace sp::conv
