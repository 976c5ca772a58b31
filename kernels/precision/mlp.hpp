#pragma once
// A two-layer MLP trained with mixed precision (Micikevicius et al. 2018,
// docs/precision.md "Mixed precision"): weights, activations and gradients stored in
// S (fp32, fp16 or bf16), every GEMM accumulating in fp32, fp32 master
// weights updated by SGD, the loss scaled by the GradScaler's S before
// backward and the gradients unscaled and checked for inf/NaN before the step.
//   H = relu(X W1), Yhat = H W2 (fp32), loss = mean((Yhat - Y)^2)
#include <Kokkos_Core.hpp>
#include <vector>

#include "kernels/precision/float16.hpp"
#include "kernels/precision/loss_scaler.hpp"
#include "kernels/nn/activations.hpp"
#include "kernels/nn/linear.hpp"
#include "kernels/nn/loss.hpp"
#include "kernels/nn/optim.hpp"

namespace sp::precision {

struct MlpShape {
  int batch, in, hidden, out;
};

template <class S>
class Mlp {
 public:
  using V = Kokkos::View<S*>;
  using F = Kokkos::View<float*>;

  // x: batch x in, y: batch x out, w1: in x hidden, w2: hidden x out (row-major, fp32 host data).
  Mlp(MlpShape sh, const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& w1,
      const std::vector<float>& w2)
      : sh_(sh),
        X_("X", x.size()),
        Y_("Y", y.size()),
        H_("H", size_t(sh.batch) * sh.hidden),
        Yhat_("Yhat", y.size()),
        dY_("dY", y.size()),
        dH_("dH", H_.extent(0)) {
    for (int l = 0; l < 2; ++l) {
      const auto& w = l ? w2 : w1;
      master_[l] = F("master", w.size());
      W_[l] = V("W", w.size());
      G_[l] = V("G", w.size());
      Kokkos::deep_copy(master_[l], Kokkos::View<const float*, Kokkos::HostSpace>(w.data(), w.size()));
    }
    copy_in(X_, x);
    Kokkos::deep_copy(Y_, Kokkos::View<const float*, Kokkos::HostSpace>(y.data(), y.size()));
    cast_weights();
  }

  // Forward pass; returns the loss (double reduction of fp32 residuals).
  double forward() {
    const auto& s = sh_;
    nn::linear_forward<S>(layer(0), X_.data(), W_[0].data(), nullptr, H_.data());
    nn::relu_forward(H_.data(), int64_t(H_.extent(0)));
    nn::gemm(nn::Op::N, nn::Op::N, s.batch, s.out, s.hidden, H_.data(), s.hidden, W_[1].data(), s.out, Yhat_.data(),
             s.out);
    return nn::mse_loss(Yhat_.data(), Y_.data(), int64_t(Yhat_.extent(0)));
  }

  // Backward of loss * scale into G_ (stored in S); returns #non-finite gradient elements.
  int64_t backward(double scale) {
    const auto& s = sh_;
    nn::mse_grad(Yhat_.data(), Y_.data(), dY_.data(), int64_t(dY_.extent(0)),
                 static_cast<float>(2.0 * scale / double(Yhat_.extent(0))));
    // dW2 = H^T dY, dH = (dY W2^T) * [H > 0], dW1 = X^T dH
    nn::linear_backward_weight<S, S, S>(layer(1), H_.data(), dY_.data(), G_[1].data(), nullptr, 0, s.out);
    nn::linear_backward_input(layer(1), dY_.data(), W_[1].data(), dH_.data());
    nn::relu_backward(H_.data(), dH_.data(), dH_.data(), int64_t(dH_.extent(0)));
    nn::linear_backward_weight<S, S, S>(layer(0), X_.data(), dH_.data(), G_[0].data(), nullptr, 0, s.hidden);
    return count_nonfinite<S>(G_[0]) + count_nonfinite<S>(G_[1]);
  }

  // SGD on the fp32 master weights with the unscaled gradients, then the
  // 16-bit working copies are re-rounded from the masters.
  void step(double lr, double scale) {
    const float f = static_cast<float>(lr / scale);
    for (int l = 0; l < 2; ++l) nn::sgd_update(master_[l].data(), G_[l].data(), f, master_[l].extent(0));
    cast_weights();
  }

  // One training iteration with loss scaling; returns the loss before the step.
  double train_step(double lr, GradScaler& scaler, bool* applied = nullptr) {
    const double loss = forward();
    const double s = scaler.scale();
    const bool found_inf = backward(s) > 0;
    const bool ok = scaler.update(found_inf);
    if (ok) step(lr, s);
    if (applied) *applied = ok;
    return loss;
  }

  const F& master(int l) const { return master_[l]; }
  const V& grad(int l) const { return G_[l]; }

  void cast_weights() {
    for (int l = 0; l < 2; ++l) nn::cast_to(master_[l].data(), W_[l].data(), master_[l].extent(0));
  }

 private:
  // Layer l + 1 of Y = X W (weights [in x out]).
  nn::LinearShape layer(int l) const {
    return l == 0 ? nn::LinearShape{sh_.batch, sh_.in, sh_.hidden, nn::Weights::in_out}
                  : nn::LinearShape{sh_.batch, sh_.hidden, sh_.out, nn::Weights::in_out};
  }
  static void copy_in(V& dst, const std::vector<float>& src) {
    auto h = Kokkos::create_mirror_view(dst);
    for (size_t i = 0; i < src.size(); ++i) h(i) = from_f32<S>(src[i]);
    Kokkos::deep_copy(dst, h);
  }

  MlpShape sh_;
  V X_;
  F Y_;
  V H_;
  F Yhat_;
  V dY_, dH_;
  F master_[2];
  V W_[2], G_[2];
};

}  // namespace sp::precision
