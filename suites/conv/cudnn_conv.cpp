#ifdef SP_HAVE_CUDNN
#include "suites/conv/cudnn_conv.hpp"

#include <cuda_runtime.h>
#include <cudnn.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "scaleproof/vendors.hpp"

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
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  bool has_act = false;
};

namespace {
// A sum of products in some order: the rounding the direct-sum bound covers.
bool direct_sum(cudnnConvolutionFwdAlgo_t a) {
  return a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
}
const char* algo_name(cudnnConvolutionFwdAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    default: return "other";
  }
}
}  // namespace

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
  // Every algorithm, fastest first; the first direct sum that ran wins.
  int count = 0;
  ok(cudnnGetConvolutionForwardAlgorithmMaxCount(p.handle, &count), "algorithm count");
  std::vector<cudnnConvolutionFwdAlgoPerf_t> found(size_t(count > 0 ? count : 1));
  int returned = 0;
  ok(cudnnFindConvolutionForwardAlgorithm(p.handle, p.x, p.w, p.conv, p.y, count, &returned, found.data()),
     "find algorithm");
  for (int i = 0; i < returned; ++i)
    if (found[size_t(i)].status == CUDNN_STATUS_SUCCESS && direct_sum(found[size_t(i)].algo)) {
      p.algo = found[size_t(i)].algo;
      break;
    }
  ok(cudnnGetConvolutionForwardWorkspaceSize(p.handle, p.x, p.w, p.conv, p.y, p.algo, &p.work_bytes), "workspace");
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
  ok(cudnnConvolutionForward(p.handle, &one, p.x, p.in, p.w, p.wts, p.conv, p.algo, p.work, p.work_bytes, &zero, p.y,
                             p.out),
     "forward");
  if (p.bias) ok(cudnnAddTensor(p.handle, &one, p.b, p.bias, &one, p.y, p.out), "bias");
  if (p.has_act) ok(cudnnActivationForward(p.handle, p.act, &one, p.y, p.out, &zero, p.y, p.out), "activation");
}

std::string CudnnConv::impl() const {
  return std::string(algo_name(p_->algo)) + " (cudnnFind, direct sums), FMA math, NCHW, workspace " +
         std::to_string(p_->work_bytes) + " B";
}

namespace {

// cuDNN as the manifest records it.
sp::VendorFacts describe_cudnn(int) {
  const size_t v = cudnnGetVersion();
  return {{"version", std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100)},
          {"algorithm",
           "per case the fastest direct sum cudnnFindConvolutionForwardAlgorithm measures (IMPLICIT_GEMM, "
           "IMPLICIT_PRECOMP_GEMM, GEMM, DIRECT; not Winograd or FFT), named in the check's note"},
          {"math", "CUDNN_FMA_MATH: fp32 arithmetic, no TF32"},
          {"layout", "NCHW"}};
}

SP_REGISTER_VENDOR("cudnn", describe_cudnn);

}  // namespace

}  // namespace sp::conv
#endif
