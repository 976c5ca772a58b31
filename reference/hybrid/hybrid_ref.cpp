#include "reference/hybrid/hybrid_ref.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "reference/dataparallel/mlp_reference.hpp"
#include "reference/hybrid/attention_ref.hpp"

namespace sp::hybrid::ref {

namespace {

// The kernel's constants as it rounds them into its type T (set by train()):
// layer norm's epsilon, GeLU's sqrt(2/pi), 0.044715 and 3 x 0.044715.
struct Consts {
  R eps, gk, gc, gc3;
};
Consts& consts() {
  static Consts c;
  return c;
}
template <class T>
void set_consts() {
  consts() = {R(T(1e-5)), R(T(0.7978845608028654)), R(T(0.044715)), R(T(T(3) * T(0.044715)))};
}

E f(R x) { return exact(x); }

Matrix init(int layer, Tensor t, int rows, int cols, int fan_in) {
  Matrix w(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) w(i, j).v = init_value(layer, t, i, j, fan_in);
  return w;
}

// C = A B (A: n x k, B: k x m), every element a dot product of k terms.
Matrix mul(const Matrix& A, const Matrix& B) {
  Matrix C(A.rows, B.cols);
  for (int i = 0; i < A.rows; ++i)
    for (int j = 0; j < B.cols; ++j) {
      Dot d;
      for (int k = 0; k < A.cols; ++k) d.add(A(i, k), B(k, j));
      C(i, j) = d.finish();
    }
  return C;
}
// A^T B and A B^T.
Matrix mul_tn(const Matrix& A, const Matrix& B) {
  Matrix C(A.cols, B.cols);
  for (int i = 0; i < A.cols; ++i)
    for (int j = 0; j < B.cols; ++j) {
      Dot d;
      for (int k = 0; k < A.rows; ++k) d.add(A(k, i), B(k, j));
      C(i, j) = d.finish();
    }
  return C;
}
Matrix mul_nt(const Matrix& A, const Matrix& B) {
  Matrix C(A.rows, B.rows);
  for (int i = 0; i < A.rows; ++i)
    for (int j = 0; j < B.rows; ++j) {
      Dot d;
      for (int k = 0; k < A.cols; ++k) d.add(A(i, k), B(j, k));
      C(i, j) = d.finish();
    }
  return C;
}
Matrix plus(const Matrix& A, const Matrix& B) {
  Matrix C(A.rows, A.cols);
  for (size_t i = 0; i < A.a.size(); ++i) C.a[i] = A.a[i] + B.a[i];
  return C;
}

E gelu(E z) {
  const Consts& k = consts();
  const E t = tanh(f(k.gk) * (z + f(k.gc) * z * z * z));
  return f(0.5) * z * (f(1) + t);
}
E gelu_grad(E z) {
  const Consts& k = consts();
  const E t = tanh(f(k.gk) * (z + f(k.gc) * z * z * z));
  return f(0.5) * (f(1) + t) + (f(0.5) * z * f(k.gk) * (f(1) + f(k.gc3) * z * z)) * (f(1) - t * t);
}

// Layer norm of each row, keeping mean and 1/std.
struct Ln {
  Matrix y;
  std::vector<E> mu, rs;
};
Ln ln_forward(const Matrix& x, const Matrix& g, const Matrix& b) {
  const int n = x.cols;
  Ln o{Matrix(x.rows, n), std::vector<E>(size_t(x.rows)), std::vector<E>(size_t(x.rows))};
  for (int r = 0; r < x.rows; ++r) {
    E s{};
    for (int j = 0; j < n; ++j) s = s + x(r, j);
    const E mu = s / f(R(n));
    E v{};
    for (int j = 0; j < n; ++j) v = v + (x(r, j) - mu) * (x(r, j) - mu);
    const E rs = f(1) / sqrt(v / f(R(n)) + f(consts().eps));
    for (int j = 0; j < n; ++j) o.y(r, j) = g(0, j) * ((x(r, j) - mu) * rs) + b(0, j);
    o.mu[size_t(r)] = mu, o.rs[size_t(r)] = rs;
  }
  return o;
}
// dx, and the gradients of gamma and beta (sums over all rows, any order).
Matrix ln_backward(const Matrix& x, const Matrix& g, const Ln& l, const Matrix& dy, Matrix& dg, Matrix& db) {
  const int n = x.cols;
  Matrix dx(x.rows, n);
  for (int r = 0; r < x.rows; ++r) {
    const E mu = l.mu[size_t(r)], rs = l.rs[size_t(r)];
    E sg{}, sgx{};
    for (int j = 0; j < n; ++j) {
      const E gg = g(0, j) * dy(r, j), xh = (x(r, j) - mu) * rs;
      sg = sg + gg, sgx = sgx + gg * xh;
    }
    const E mg = sg / f(R(n)), mgx = sgx / f(R(n));
    for (int j = 0; j < n; ++j) {
      const E gg = g(0, j) * dy(r, j), xh = (x(r, j) - mu) * rs;
      dx(r, j) = rs * (gg - mg - xh * mgx);
    }
  }
  dg = Matrix(1, n), db = Matrix(1, n);
  for (int j = 0; j < n; ++j) {
    Dot sg, sb;
    for (int r = 0; r < x.rows; ++r) {
      sg.add(dy(r, j), (x(r, j) - l.mu[size_t(r)]) * l.rs[size_t(r)]);
      sb.add(dy(r, j), f(1));
    }
    dg(0, j) = sg.finish(), db(0, j) = sb.finish();
  }
  return dx;
}

// The model's dimensions: the attention's, and the MLP width f.
struct Dims : AttnDims {
  int f;
};

struct BlockStash {
  Matrix x, q, k, v, x1, z, hh;
  Ln ln1, ln2;
  Attn at;
};

}  // namespace

template <class T>
Model train(const ModelShape& m, int steps, const AdamConsts& ac) {
  set_unit_roundoff(std::is_same<T, float>::value ? 0x1p-24 : 0x1p-53);
  set_consts<T>();
  const int dh = m.hidden / m.heads;
  const Dims D{{m.global_batch, m.seq, m.hidden, m.heads, dh, R(T(1.0 / std::sqrt(double(dh))))}, m.ffn_width()};
  const int N = D.B * D.s, h = D.h;
  Model w, mom, vel;
  for (int l = 0; l < m.layers; ++l) {
    w[{l, Tensor::ln1_g}] = init(l, Tensor::ln1_g, 1, h, 1);
    w[{l, Tensor::ln1_b}] = init(l, Tensor::ln1_b, 1, h, 1);
    w[{l, Tensor::ln2_g}] = init(l, Tensor::ln2_g, 1, h, 1);
    w[{l, Tensor::ln2_b}] = init(l, Tensor::ln2_b, 1, h, 1);
    for (Tensor t : {Tensor::wq, Tensor::wk, Tensor::wv, Tensor::wo}) w[{l, t}] = init(l, t, h, h, h);
    w[{l, Tensor::w1}] = init(l, Tensor::w1, h, D.f, h);
    w[{l, Tensor::w2}] = init(l, Tensor::w2, D.f, h, D.f);
  }
  for (auto& [key, mat] : w) mom[key] = Matrix(mat.rows, mat.cols), vel[key] = Matrix(mat.rows, mat.cols);
  const Matrix X = init(0, Tensor::input, N, h, 1), Y = init(0, Tensor::target, N, h, 1);
  const T lr = T(ac.lr), b1 = T(ac.beta1), b2 = T(ac.beta2), eps = T(ac.eps);
  const T cl = T(1.0 / m.global_batch);

  for (int t = 1; t <= steps; ++t) {
    std::vector<BlockStash> st(size_t(m.layers));
    Matrix x = X;
    for (int l = 0; l < m.layers; ++l) {
      BlockStash& s = st[size_t(l)];
      s.x = x;
      s.ln1 = ln_forward(x, w[{l, Tensor::ln1_g}], w[{l, Tensor::ln1_b}]);
      s.q = mul(s.ln1.y, w[{l, Tensor::wq}]);
      s.k = mul(s.ln1.y, w[{l, Tensor::wk}]);
      s.v = mul(s.ln1.y, w[{l, Tensor::wv}]);
      s.at = attn_forward(D, s.q, s.k, s.v);
      s.x1 = plus(x, mul(s.at.O, w[{l, Tensor::wo}]));
      s.ln2 = ln_forward(s.x1, w[{l, Tensor::ln2_g}], w[{l, Tensor::ln2_b}]);
      s.z = mul(s.ln2.y, w[{l, Tensor::w1}]);
      s.hh = Matrix(N, D.f);
      for (size_t i = 0; i < s.z.a.size(); ++i) s.hh.a[i] = gelu(s.z.a[i]);
      x = plus(s.x1, mul(s.hh, w[{l, Tensor::w2}]));
    }
    Matrix dy(N, h);
    for (size_t i = 0; i < dy.a.size(); ++i) dy.a[i] = f(cl) * (x.a[i] - Y.a[i]);
    Model g;
    for (int l = m.layers - 1; l >= 0; --l) {
      const BlockStash& s = st[size_t(l)];
      g[{l, Tensor::w2}] = mul_tn(s.hh, dy);
      Matrix dz = mul_nt(dy, w[{l, Tensor::w2}]);
      for (size_t i = 0; i < dz.a.size(); ++i) dz.a[i] = dz.a[i] * gelu_grad(s.z.a[i]);
      g[{l, Tensor::w1}] = mul_tn(s.ln2.y, dz);
      const Matrix dln2 = mul_nt(dz, w[{l, Tensor::w1}]);
      Matrix dx1 =
          plus(ln_backward(s.x1, w[{l, Tensor::ln2_g}], s.ln2, dln2, g[{l, Tensor::ln2_g}], g[{l, Tensor::ln2_b}]), dy);
      g[{l, Tensor::wo}] = mul_tn(s.at.O, dx1);
      const Matrix dO = mul_nt(dx1, w[{l, Tensor::wo}]);
      Matrix dQ, dK, dV;
      attn_backward(D, s.q, s.k, s.v, s.at, dO, dQ, dK, dV);
      g[{l, Tensor::wq}] = mul_tn(s.ln1.y, dQ);
      g[{l, Tensor::wk}] = mul_tn(s.ln1.y, dK);
      g[{l, Tensor::wv}] = mul_tn(s.ln1.y, dV);
      // d ln1 = [dQ dK dV] [Wq Wk Wv]^T: one dot product of 3h terms per element.
      Matrix dln1(N, h);
      for (int i = 0; i < N; ++i)
        for (int j = 0; j < h; ++j) {
          Dot d;
          for (int c = 0; c < h; ++c) {
            d.add(dQ(i, c), w[{l, Tensor::wq}](j, c));
            d.add(dK(i, c), w[{l, Tensor::wk}](j, c));
            d.add(dV(i, c), w[{l, Tensor::wv}](j, c));
          }
          dln1(i, j) = d.finish();
        }
      dy =
          plus(ln_backward(s.x, w[{l, Tensor::ln1_g}], s.ln1, dln1, g[{l, Tensor::ln1_g}], g[{l, Tensor::ln1_b}]), dx1);
    }
    // Adam, with the kernel's fp32 constants.
    // As nn::adam_update evaluates them in T.
    const T c1 = T(1) - T(std::pow(b1, t)), c2 = T(1) - T(std::pow(b2, t)), a1 = T(1) - b1, a2 = T(1) - b2;
    const R cap = 2 * R(lr) * sp::dp::ref::detail::adam_ratio_cap(R(b1), R(b2), t) * (1 + 8 * unit() * t);
    for (auto& [key, th] : w) {
      const Matrix& gr = g.at(key);
      Matrix &mm = mom[key], &vv = vel[key];
      for (size_t i = 0; i < th.a.size(); ++i) {
        const E gi = gr.a[i];
        mm.a[i] = f(b1) * mm.a[i] + f(a1) * gi;
        vv.a[i] = f(b2) * vv.a[i] + f(a2) * gi * gi;
        E upd = f(lr) * (mm.a[i] / f(c1)) / (sqrt(vv.a[i] / f(c2)) + f(eps));
        if (!(upd.e < cap)) upd.e = cap;
        th.a[i] = th.a[i] - upd;
      }
    }
  }
  return w;
}

template Model train<float>(const ModelShape&, int, const AdamConsts&);
template Model train<double>(const ModelShape&, int, const AdamConsts&);

}  // namespace sp::hybrid::ref
