#pragma once
// Megatron-LM's tensor-parallel layers (Shoeybi et al. 2019, sec. 3;
// megatron/core/tensor_parallel/layers.py), one rank's shard each:
//  - ColumnParallelLinear: W = [W_1 .. W_t] split by columns; forward
//    Y_i = X W_i needs nothing (X is replicated); backward all-reduces dX.
//  - RowParallelLinear: W split by rows, input split by columns; forward
//    all-reduces the partial products; backward needs nothing.
//  - MLP: column-parallel, GeLU on the local columns, row-parallel.
//  - self-attention: fused QKV column-parallel (whole heads per rank),
//    causal attention on the local heads, row-parallel output projection.
// Each layer stashes what its backward needs; shards come from the full
// weights by slicing (the reference keeps the full ones).
#include "kernels/modelparallel/attention_core.hpp"
#include "kernels/modelparallel/dense.hpp"
#include "kernels/modelparallel/tp_comm.hpp"

namespace sp::mp {

struct ColumnParallelLinear {
  Mat W, dW;
  CMat X;  // W [k, o/t]; X: the input, kept (not copied) for the backward
  void forward(CMat x, Mat y) {
    X = x;
    matmul(X, false, W, false, y);
  }
  void backward(TpGroup& g, CMat dy, Mat dx) {
    matmul(X, true, dy, false, dW);
    matmul(dy, false, W, true, dx);
    g.all_reduce(dx, true);
  }
};

struct RowParallelLinear {
  Mat W, dW;
  CMat X;  // W [k/t, o]; X: the local input, kept (not copied) for the backward
  void forward(TpGroup& g, CMat x, Mat y) {
    X = x;
    matmul(X, false, W, false, y);
    g.all_reduce(y, false);
  }
  void backward(CMat dy, Mat dx) {
    matmul(X, true, dy, false, dW);
    matmul(dy, false, W, true, dx);
  }
};

// Weights are [in, out] as in Y = X W. A: [h, f], B: [f, h].
struct TpMlp {
  ColumnParallelLinear fc1;
  RowParallelLinear fc2;
  Mat Z, H;  // pre- and post-GeLU local activations

  void init(TpGroup& g, CMat A, CMat B) {
    const int fl = static_cast<int>(A.extent(1)) / g.size();
    fc1.W = column_slice(A, g.rank() * fl, fl);
    fc2.W = row_slice(B, g.rank() * fl, fl);
    fc1.dW = Mat("dA", fc1.W.extent(0), fl);
    fc2.dW = Mat("dB", fl, fc2.W.extent(1));
  }
  void forward(TpGroup& g, CMat x, Mat y) {
    const int n = static_cast<int>(x.extent(0)), fl = static_cast<int>(fc1.W.extent(1));
    Z = Mat("mlp_z", n, fl);
    H = Mat("mlp_h", n, fl);
    fc1.forward(x, Z);
    gelu_forward(Z, H);
    fc2.forward(g, H, y);
  }
  // Activation elements kept for the backward: the input, Z and H (fc2's input).
  size_t stash_elems() const { return fc1.X.size() + Z.size() + H.size(); }
  size_t param_elems() const { return fc1.W.size() + fc2.W.size(); }
  void backward(TpGroup& g, CMat dy, Mat dx) {
    Mat dH("mlp_dh", Z.extent(0), Z.extent(1)), dZ("mlp_dz", Z.extent(0), Z.extent(1));
    fc2.backward(dy, dH);
    gelu_backward(Z, dH, dZ);
    fc1.backward(g, dZ, dx);
  }
};

// Wq, Wk, Wv, Wo: [h, h]; heads split over the group, whole heads per rank.
struct TpAttention {
  AttnShape sh{};
  ColumnParallelLinear qkv;  // local [Wq_i | Wk_i | Wv_i], [h, 3 h/t]
  RowParallelLinear proj;    // Wo_i, [h/t, h]
  Mat QKV, O, P;

  void init(TpGroup& g, int b, int s, int heads, CMat Wq, CMat Wk, CMat Wv, CMat Wo) {
    const int h = static_cast<int>(Wq.extent(0)), t = g.size();
    sh = {b, s, heads / t, h / heads};
    const int hl = sh.hl(), c0 = g.rank() * hl;
    qkv.W = Mat("Wqkv_i", h, 3 * hl);
    int block = 0;
    for (CMat W : {Wq, Wk, Wv}) {
      Kokkos::deep_copy(Kokkos::subview(qkv.W, Kokkos::ALL, Kokkos::make_pair(block * hl, block * hl + hl)),
                        Kokkos::subview(W, Kokkos::ALL, Kokkos::make_pair(c0, c0 + hl)));
      ++block;
    }
    proj.W = row_slice(Wo, c0, hl);
    qkv.dW = Mat("dWqkv_i", h, 3 * hl);
    proj.dW = Mat("dWo_i", hl, h);
  }
  void forward(TpGroup& g, CMat x, Mat y) {
    const int n = static_cast<int>(x.extent(0)), hl = sh.hl();
    QKV = Mat("attn_qkv", n, 3 * hl);
    O = Mat("attn_o", n, hl);
    P = Mat("attn_p", sh.b * sh.heads * sh.s, sh.s);
    qkv.forward(x, QKV);
    attention_forward(sh, QKV, O, P);
    proj.forward(g, O, y);
  }
  // Kept for the backward: the input, Q K V, the probabilities, the context O (proj's input).
  size_t stash_elems() const { return qkv.X.size() + QKV.size() + P.size() + O.size(); }
  size_t param_elems() const { return qkv.W.size() + proj.W.size(); }
  void backward(TpGroup& g, CMat dy, Mat dx) {
    Mat dO("attn_do", O.extent(0), O.extent(1)), dS("attn_ds", P.extent(0), P.extent(1));
    Mat dQKV("attn_dqkv", QKV.extent(0), QKV.extent(1));
    proj.backward(dy, dO);
    attention_backward(sh, QKV, P, dO, dS, dQKV);
    qkv.backward(g, dQKV, dx);
  }
};

// A transformer layer without layer norms and dropout:
// X1 = X + Attention(X), Y = X1 + MLP(X1); two all-reduces each way.
struct TpTransformerLayer {
  TpAttention attn;
  TpMlp mlp;
  size_t stash_elems() const { return attn.stash_elems() + mlp.stash_elems(); }
  size_t param_elems() const { return attn.param_elems() + mlp.param_elems(); }
  void forward(TpGroup& g, CMat x, Mat y) {
    Mat a("layer_a", x.extent(0), x.extent(1)), x1("layer_x1", x.extent(0), x.extent(1));
    Mat f("layer_f", x.extent(0), x.extent(1));
    attn.forward(g, x, a);
    add(x, a, x1);
    mlp.forward(g, x1, f);
    add(x1, f, y);
  }
  void backward(TpGroup& g, CMat dy, Mat dx) {
    Mat dm("layer_dm", dy.extent(0), dy.extent(1)), dx1("layer_dx1", dy.extent(0), dy.extent(1));
    Mat da("layer_da", dy.extent(0), dy.extent(1));
    mlp.backward(g, dy, dm);
    add(dy, dm, dx1);
    attn.backward(g, dx1, da);
    add(dx1, da, dx);
  }
};

}  // namespace sp::mp
