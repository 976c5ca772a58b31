#include "kernels/precision/block_stack.hpp"

#include <stdexcept>
#include <string>

namespace sp::precision {

// x_{l+1} = relu(x_l W_l): W_l is [in x out].
static nn::LinearShape shape(const StackShape& sh) { return {sh.batch, sh.width, sh.width, nn::Weights::in_out}; }

namespace {
Kokkos::View<float*> upload(const std::vector<float>& h, size_t off, size_t n, const char* label) {
  Kokkos::View<float*> d(std::string(label), n);
  Kokkos::deep_copy(d, Kokkos::View<const float*, Kokkos::HostSpace>(h.data() + off, n));
  return d;
}
}  // namespace

BlockStack::BlockStack(StackShape sh, const std::vector<float>& w, const std::vector<float>& x0,
                       const std::vector<float>& dout)
    : sh_(sh) {
  const size_t ww = size_t(sh.width) * sh.width, act = size_t(sh.batch) * sh.width;
  for (int l = 0; l < sh.layers(); ++l) {
    W_.push_back(upload(w, l * ww, ww, "W"));
    dW_.push_back(Kokkos::View<float*>("dW", ww));
  }
  x0_ = upload(x0, 0, act, "x0");
  dout_ = upload(dout, 0, act, "dout");
  dx_ = Kokkos::View<float*>("dx", act);
  dz_ = Kokkos::View<float*>("dz", act);
}

void BlockStack::layer_forward(int l, const Kokkos::View<float*>& in, const Kokkos::View<float*>& out) {
  nn::linear_forward<float>(shape(sh_), in.data(), W_[l].data(), nullptr, out.data());
  nn::relu_forward(out.data(), int64_t(out.extent(0)));
}

void BlockStack::layer_backward(int l, const Kokkos::View<float*>& in, const Kokkos::View<float*>& out) {
  // dz = dx * [out > 0]; dW_l = in^T dz; dx = dz W_l^T.
  nn::relu_backward(out.data(), dx_.data(), dz_.data(), int64_t(dz_.extent(0)));
  nn::linear_backward_weight<float, float, float>(shape(sh_), in.data(), dz_.data(), dW_[l].data(), nullptr, 0,
                                                  sh_.width);
  nn::linear_backward_input(shape(sh_), dz_.data(), W_[l].data(), dx_.data());
}

void BlockStack::forward_only() {
  ActivationTracker t(x0_.extent(0));
  auto cur = t.acquire();
  Kokkos::deep_copy(cur, x0_);
  for (int l = 0; l < sh_.layers(); ++l) {
    auto next = t.acquire();
    layer_forward(l, cur, next);
    t.release(cur);
    cur = next;
  }
}

void BlockStack::train_step(int every_k) {
  const int L = sh_.layers(), s = sh_.sub;
  const int seg_layers = every_k == 0 ? L : every_k * s;  // layers per segment
  ActivationTracker t(x0_.extent(0));
  std::vector<Kokkos::View<float*>> x(L + 1);  // x[l]: input of layer l; x[L]: output
  x[0] = t.acquire();
  Kokkos::deep_copy(x[0], x0_);
  // Forward: keep x[l] if keep-all or if l starts a segment.
  for (int l = 0; l < L; ++l) {
    x[l + 1] = t.acquire();
    layer_forward(l, x[l], x[l + 1]);
    if (every_k != 0 && l % seg_layers != 0) t.release(x[l]);
  }
  stored_ = t.live() - 1;
  Kokkos::deep_copy(dx_, dout_);  // the loss gradient; the output is kept for the last ReLU mask
  // Backward, one segment at a time from the last.
  for (int start = ((L - 1) / seg_layers) * seg_layers; start >= 0; start -= seg_layers) {
    const int end = start + seg_layers < L ? start + seg_layers : L;
    for (int l = start; l + 1 < end; ++l)  // recompute the segment's inner activations
      if (x[l + 1].data() == nullptr) {
        x[l + 1] = t.acquire();
        layer_forward(l, x[l], x[l + 1]);
      }
    for (int l = end - 1; l >= start; --l) {
      layer_backward(l, x[l], x[l + 1]);
      t.release(x[l + 1]);  // layer l's output is no longer needed
    }
  }
  t.release(x[0]);
  Kokkos::fence();
  if (t.live() != 0) throw std::logic_error("block stack: activation buffers leaked");
  peak_ = t.peak();
}

}  // namespace sp::precision
