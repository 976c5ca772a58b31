#pragma once
// Sequential single-rank reference of the pipelined model: L layers
// y = GeLU(x W_l), every micro-batch forward then backward in order, weight
// gradients summed over all micro-batches. Plain loops over bounded values
// (bounded.hpp): dW_l is one dot product over all micro-batches' rows, so its
// bound covers any order of accumulation.
#include "reference/modelparallel/bounded.hpp"

namespace sp::reference {

struct PipelineRef {
  std::vector<EbMat> Y, dX;  // per micro-batch: model output, gradient of the model input
  std::vector<EbMat> dW;     // per layer
};

inline PipelineRef pipeline_reference(const std::vector<EbMat>& W, const std::vector<EbMat>& X,
                                      const std::vector<EbMat>& G) {
  const int L = static_cast<int>(W.size()), m = static_cast<int>(X.size());
  const int rows = X[0].r, h = X[0].c;
  PipelineRef r;
  // ins[l] and dzs[l]: all micro-batches' inputs and pre-activation gradients of layer l, stacked by rows.
  std::vector<EbMat> ins(L, EbMat(m * rows, h)), dzs(L, EbMat(m * rows, h));
  for (int mb = 0; mb < m; ++mb) {
    std::vector<EbMat> x(L + 1), z(L);
    x[0] = X[mb];
    for (int l = 0; l < L; ++l) {
      z[l] = matmul(x[l], false, W[l], false);
      x[l + 1] = EbMat(rows, h);
      for (size_t i = 0; i < z[l].a.size(); ++i) x[l + 1].a[i] = gelu(z[l].a[i]);
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < h; ++j) ins[l](mb * rows + i, j) = x[l](i, j);
    }
    r.Y.push_back(x[L]);
    EbMat dy = G[mb];
    for (int l = L - 1; l >= 0; --l) {
      EbMat dz(rows, h);
      for (size_t i = 0; i < dz.a.size(); ++i) dz.a[i] = dy.a[i] * gelu_grad(z[l].a[i]);
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < h; ++j) dzs[l](mb * rows + i, j) = dz(i, j);
      dy = matmul(dz, false, W[l], true);
    }
    r.dX.push_back(dy);
  }
  for (int l = 0; l < L; ++l) r.dW.push_back(matmul(ins[l], true, dzs[l], false));
  return r;
}

}  // namespace sp::reference
