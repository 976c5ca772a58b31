#pragma once
// A two-layer MLP trained with mixed precision (Micikevicius et al. 2018,
// MODELS.md "Mixed precision"): weights, activations and gradients stored in
// S (fp32, fp16 or bf16), every GEMM accumulating in fp32, fp32 master
// weights updated by SGD, the loss scaled by the GradScaler's S before
// backward and the gradients unscaled and checked for inf/NaN before the step.
//   H = relu(X W1), Yhat = H W2 (fp32), loss = mean((Yhat - Y)^2)
#include <Kokkos_Core.hpp>
#include <vector>

#include "kernels/precision/float16.hpp"
#include "kernels/precision/loss_scaler.hpp"
#include "kernels/precision/matmul_strided.hpp"

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
        X_("X", x.size()), Y_("Y", y.size()), H_("H", size_t(sh.batch) * sh.hidden), Yhat_("Yhat", y.size()),
        dY_("dY", y.size()), dH_("dH", H_.extent(0)) {
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
    using namespace sp::kernels;
    const auto& s = sh_;
    matmul_strided<S, S, S>(s.batch, s.hidden, s.in, X_.data(), Strided::rows(s.in), W_[0].data(),
                            Strided::rows(s.hidden), H_.data(), Epilogue::relu);
    matmul_strided<S, S, float>(s.batch, s.out, s.hidden, H_.data(), Strided::rows(s.hidden), W_[1].data(),
                                Strided::rows(s.out), Yhat_.data());
    auto yh = Yhat_;
    auto y = Y_;
    double sum = 0;
    Kokkos::parallel_reduce(
        "mse", yh.extent(0), KOKKOS_LAMBDA(const int64_t i, double& a) {
          const double r = double(yh(i)) - double(y(i));
          a += r * r;
        },
        sum);
    return sum / double(yh.extent(0));
  }

  // Backward of loss * scale into G_ (stored in S); returns #non-finite gradient elements.
  int64_t backward(double scale) {
    using namespace sp::kernels;
    const auto& s = sh_;
    auto yh = Yhat_;
    auto y = Y_;
    auto dy = dY_;
    const float c = static_cast<float>(2.0 * scale / double(yh.extent(0)));
    Kokkos::parallel_for(
        "dmse", yh.extent(0), KOKKOS_LAMBDA(const int64_t i) { dy(i) = from_f32<S>(c * (yh(i) - y(i))); });
    // dW2 = H^T dY, dH = (dY W2^T) * [H > 0], dW1 = X^T dH
    matmul_strided<S, S, S>(s.hidden, s.out, s.batch, H_.data(), Strided::transposed(s.hidden), dY_.data(),
                            Strided::rows(s.out), G_[1].data());
    matmul_strided<S, S, S>(s.batch, s.hidden, s.out, dY_.data(), Strided::rows(s.out), W_[1].data(),
                            Strided::transposed(s.out), dH_.data(), Epilogue::mask, H_.data());
    matmul_strided<S, S, S>(s.in, s.hidden, s.batch, X_.data(), Strided::transposed(s.in), dH_.data(),
                            Strided::rows(s.hidden), G_[0].data());
    return count_nonfinite<S>(G_[0]) + count_nonfinite<S>(G_[1]);
  }

  // SGD on the fp32 master weights with the unscaled gradients, then the
  // 16-bit working copies are re-rounded from the masters.
  void step(double lr, double scale) {
    const float f = static_cast<float>(lr / scale);
    for (int l = 0; l < 2; ++l) {
      auto m = master_[l];
      auto g = G_[l];
      Kokkos::parallel_for(
          "sgd_master", m.extent(0), KOKKOS_LAMBDA(const int64_t i) { m(i) -= f * to_f32(g(i)); });
    }
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

  // Public: nvcc refuses device lambdas in private member functions.
  void cast_weights() {
    for (int l = 0; l < 2; ++l) {
      auto m = master_[l];
      auto w = W_[l];
      Kokkos::parallel_for(
          "cast_weights", m.extent(0), KOKKOS_LAMBDA(const int64_t i) { w(i) = from_f32<S>(m(i)); });
    }
  }

 private:
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
