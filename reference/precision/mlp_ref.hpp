#pragma once
// Reference training of the two-layer MLP of kernels/precision/mlp.hpp in
// double precision with plain loops: H = relu(X W1), Yhat = H W2,
// loss = mean((Yhat - Y)^2), SGD. No loss scaling (exact in real arithmetic);
// steps the kernel skipped (inf/NaN) are skipped here too.
#include <vector>

namespace sp::reference {

inline std::vector<double> mlp_train_ref(int B, int D, int Hd, int O, const std::vector<float>& x,
                                         const std::vector<float>& y, std::vector<double> w1, std::vector<double> w2,
                                         double lr, const std::vector<bool>& applied) {
  std::vector<double> losses;
  std::vector<double> h(B * Hd), yh(B * O), dy(B * O), dh(B * Hd), g1(D * Hd), g2(Hd * O);
  for (bool step : applied) {
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < Hd; ++j) {
        double s = 0;
        for (int k = 0; k < D; ++k) s += double(x[b * D + k]) * w1[k * Hd + j];
        h[b * Hd + j] = s > 0 ? s : 0;
      }
    double loss = 0;
    for (int b = 0; b < B; ++b)
      for (int o = 0; o < O; ++o) {
        double s = 0;
        for (int j = 0; j < Hd; ++j) s += h[b * Hd + j] * w2[j * O + o];
        yh[b * O + o] = s;
        const double r = s - double(y[b * O + o]);
        loss += r * r;
        dy[b * O + o] = 2 * r / (B * O);
      }
    losses.push_back(loss / (B * O));
    if (!step) continue;
    for (int j = 0; j < Hd; ++j)
      for (int o = 0; o < O; ++o) {
        double s = 0;
        for (int b = 0; b < B; ++b) s += h[b * Hd + j] * dy[b * O + o];
        g2[j * O + o] = s;
      }
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < Hd; ++j) {
        double s = 0;
        for (int o = 0; o < O; ++o) s += dy[b * O + o] * w2[j * O + o];
        dh[b * Hd + j] = h[b * Hd + j] > 0 ? s : 0;
      }
    for (int k = 0; k < D; ++k)
      for (int j = 0; j < Hd; ++j) {
        double s = 0;
        for (int b = 0; b < B; ++b) s += double(x[b * D + k]) * dh[b * Hd + j];
        g1[k * Hd + j] = s;
      }
    for (size_t i = 0; i < w1.size(); ++i) w1[i] -= lr * g1[i];
    for (size_t i = 0; i < w2.size(); ++i) w2[i] -= lr * g2[i];
  }
  return losses;
}

}  // namespace sp::reference
