#pragma once
// cuDNN convolution (the GPU vendor baseline) on caller-owned device memory:
// NCHW, FMA math (fp32 arithmetic, no TF32), bias and activation applied
// after. The algorithm is the fastest that cudnnFindConvolutionForwardAlgorithm
// measures for the case among the direct sums (implicit GEMM, precomputed
// implicit GEMM, explicit GEMM, direct): Winograd and FFT round differently
// from a sum of products, which the conformance bound covers. impl() names
// the choice. Built only with SP_HAVE_CUDNN (CUDA builds); compiled here, run
// only on a GPU machine.
#include <memory>
#include <string>

#include "kernels/conv/conv_spec.hpp"

namespace sp::conv {

class CudnnConv {
 public:
  CudnnConv(const ConvSpec& s, int n, int h, int w, const float* in, const float* wts, const float* bias, float* out);
  ~CudnnConv();
  void run();
  std::string impl() const;  // the algorithm found, its math and layout

 private:
  struct Impl;
  std::unique_ptr<Impl> p_;
};

}  // namespace sp::conv
