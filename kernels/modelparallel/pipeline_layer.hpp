#pragma once
// The layer a pipeline stage is made of: y = GeLU(x W), W [h, h]; its
// backward accumulates dW += x^T dZ (over micro-batches) and returns
// dx = dZ W^T with dZ = dy GeLU'(x W). Shared by the pipeline executor and
// the sequential run it is compared with bit for bit.
#include "kernels/modelparallel/dense.hpp"

namespace sp::mp {

struct PipeLayer {
  Mat W, dW;
};

struct LayerStash {  // what the backward needs: the input and the pre-activation
  CMat x;
  Mat z;
  size_t elems() const { return x.size() + z.size(); }
};

inline Mat layer_forward(const PipeLayer& l, CMat x, LayerStash& st) {
  Mat z("pipe_z", x.extent(0), l.W.extent(1)), y("pipe_y", x.extent(0), l.W.extent(1));
  matmul(x, false, l.W, false, z);
  gelu_forward(z, y);
  st = {x, z};
  return y;
}

inline Mat layer_backward(PipeLayer& l, const LayerStash& st, CMat dy) {
  Mat dz("pipe_dz", dy.extent(0), dy.extent(1)), dx("pipe_dx", dy.extent(0), l.W.extent(0));
  gelu_backward(st.z, dy, dz);
  matmul(st.x, true, dz, false, l.dW, /*accumulate=*/true);
  matmul(dz, false, l.W, true, dx);
  return dx;
}

}  // namespace sp::mp
