#ifdef SP_HAVE_CUDNN
#include "suites/conv/cudnn_conv.hpp"

#include <cuda_runtime.h>
#include <cudnn.h>

#include <stdexcept>
#include <string>

namespace sp::conv {

namespace {
void ok(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw std::runtime_error(std::string("cuDNN ") + what + ": " + cudnnGetErrorString(s));
}
}  // namespace

struct CudnnConv::Impl {
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, b = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  const float *in = nullptr, *wts = nullptr, *bias = nullptr;
  float* out = nullptr;
  void* work = nullptr;
  size_t work_bytes = 0;
  bool has_act = false;
};

CudnnConv::CudnnConv(const ConvSpec& s, int n, int h, int w, const float* in, const float* wts, const float* bias,
                     float* out)
    : p_(new Impl) {
  auto& p = *p_;
  p.in = in, p.wts = wts, p.bias = s.bias ? bias : nullptr, p.out = out;
  ok(cudnnCreate(&p.handle), "create");
  ok(cudnnCreateTensorDescriptor(&p.x), "x");
  ok(cudnnCreateTensorDescriptor(&p.y), "y");
  ok(cudnnCreateTensorDescriptor(&p.b), "b");
  ok(cudnnCreateFilterDescriptor(&p.w), "w");
  ok(cudnnCreateConvolutionDescriptor(&p.conv), "conv");
  ok(cudnnSetTensor4dDescriptor(p.x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, s.c_in, h, w), "x shape");
  ok(cudnnSetTensor4dDescriptor(p.y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, s.c_out, s.out_h(h), s.out_w(w)),
     "y shape");
  ok(cudnnSetTensor4dDescriptor(p.b, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, s.c_out, 1, 1), "b shape");
  ok(cudnnSetFilter4dDescriptor(p.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s.c_out, s.cin_g(), s.kh, s.kw), "w shape");
  ok(cudnnSetConvolution2dDescriptor(p.conv, s.pad_h, s.pad_w, s.stride, s.stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                     CUDNN_DATA_FLOAT),
     "conv");
  ok(cudnnSetConvolutionGroupCount(p.conv, s.groups), "groups");
  ok(cudnnSetConvolutionMathType(p.conv, CUDNN_FMA_MATH), "math");
  ok(cudnnGetConvolutionForwardWorkspaceSize(p.handle, p.x, p.w, p.conv, p.y, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                                             &p.work_bytes),
     "workspace");
  if (p.work_bytes > 0 && cudaMalloc(&p.work, p.work_bytes) != cudaSuccess) throw std::runtime_error("cuDNN workspace");
  if (s.act != Act::none) {
    p.has_act = true;
    ok(cudnnCreateActivationDescriptor(&p.act), "act");
    ok(cudnnSetActivationDescriptor(p.act, s.act == Act::relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_SIGMOID,
                                    CUDNN_NOT_PROPAGATE_NAN, 0.0),
       "act");
  }
}

CudnnConv::~CudnnConv() {
  auto& p = *p_;
  if (p.work) cudaFree(p.work);
  if (p.act) cudnnDestroyActivationDescriptor(p.act);
  cudnnDestroyConvolutionDescriptor(p.conv);
  cudnnDestroyFilterDescriptor(p.w);
  cudnnDestroyTensorDescriptor(p.b);
  cudnnDestroyTensorDescriptor(p.y);
  cudnnDestroyTensorDescriptor(p.x);
  cudnnDestroy(p.handle);
}

void CudnnConv::run() {
  auto& p = *p_;
  const float one = 1, zero = 0;
  ok(cudnnConvolutionForward(p.handle, &one, p.x, p.in, p.w, p.wts, p.conv, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                             p.work, p.work_bytes, &zero, p.y, p.out),
     "forward");
  if (p.bias) ok(cudnnAddTensor(p.handle, &one, p.b, p.bias, &one, p.y, p.out), "bias");
  if (p.has_act) ok(cudnnActivationForward(p.handle, p.act, &one, p.y, p.out, &zero, p.y, p.out), "activation");
}

}  // namespace sp::conv
#endif
