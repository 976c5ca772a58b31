#pragma once
// References of the composite conv blocks written from each block's
// definition (the papers' structure), not from the declared graph the kernel
// runs: the layers, their shapes, activations and connections are spelled
// out here again, so a wrong declaration (suites/conv/blocks_*.cpp) differs
// from its reference. Only the weights are shared: the i-th convolution of a
// definition takes the i-th weights the kernel allocated, and a weight count
// that does not fit the layer the definition names is reported as an error.
// The primitives and their error bounds are conv_ref.hpp's.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/conv/conv_ref.hpp"
#include "scaleproof/params.hpp"

namespace sp::reference {

template <class T>
struct LayerWeights {
  const std::vector<T>* w = nullptr;
  const std::vector<T>* b = nullptr;  // empty without a bias
};

template <class T>
class BlockRef {
 public:
  BlockRef(const std::vector<LayerWeights<T>>& weights, double u) : weights_(weights), u_(u) {}

  // k_h x k_w, "same" padding, stride 1, the next weights in order.
  RefTensor conv(const RefTensor& x, int kh, int kw, int cout, conv::Act act = conv::Act::none, int groups = 1,
                 bool bias = false) {
    conv::ConvSpec s;
    s.kh = kh, s.kw = kw, s.c_in = x.c, s.c_out = cout, s.groups = groups, s.bias = bias, s.act = act;
    s.pad_h = (kh - 1) / 2, s.pad_w = (kw - 1) / 2;
    const size_t i = next_++;
    if (i >= weights_.size())
      throw std::runtime_error("block reference: the definition has more than " + std::to_string(weights_.size()) +
                               " convolutions");
    const auto& lw = weights_[i];
    if (static_cast<int64_t>(lw.w->size()) != s.weight_count() || lw.b->size() != static_cast<size_t>(bias ? cout : 0))
      throw std::runtime_error("block reference: convolution " + std::to_string(i + 1) + " of the kernel has " +
                               std::to_string(lw.w->size()) + " weights and " + std::to_string(lw.b->size()) +
                               " biases; the definition's " + std::to_string(kh) + "x" + std::to_string(kw) + " " +
                               std::to_string(x.c) + "->" + std::to_string(cout) + " layer needs " +
                               std::to_string(s.weight_count()) + " and " + std::to_string(bias ? cout : 0));
    return conv_ref<T>(s, x, *lw.w, *lw.b, u_);
  }
  RefTensor add(const RefTensor& a, const RefTensor& b, conv::Act act) { return add_ref(a, b, act, u_); }
  RefTensor mean(const RefTensor& x) { return mean_ref(x, u_); }
  RefTensor scale(const RefTensor& x, const RefTensor& s) { return scale_ref(x, s, u_); }
  // Channels of the parts one after the other, the first `keep` of them (0: all).
  static RefTensor concat(const std::vector<const RefTensor*>& parts, int keep = 0) {
    int total = 0;
    for (auto* p : parts) total += p->c;
    if (keep > 0) total = std::min(total, keep);
    RefTensor y;
    y.resize(parts[0]->n, total, parts[0]->h, parts[0]->w);
    int c0 = 0;
    for (auto* p : parts) {
      const int take = std::min(p->c, total - c0);
      if (take > 0) copy_channels_ref(*p, 0, y, c0, take);
      c0 += take;
    }
    return y;
  }
  void all_used() const {
    if (next_ != weights_.size())
      throw std::runtime_error("block reference: the kernel has " + std::to_string(weights_.size()) +
                               " convolutions, the definition " + std::to_string(next_));
  }

 private:
  const std::vector<LayerWeights<T>>& weights_;
  double u_;
  size_t next_ = 0;
};

// The output of `structure` (a variant's structure name) of block technique
// `technique` on input x. Throws for a pair it does not define.
template <class T>
RefTensor block_reference(const std::string& technique, const std::string& structure, const Params& p,
                          const RefTensor& x, const std::vector<LayerWeights<T>>& weights, double u) {
  using conv::Act;
  BlockRef<T> r(weights, u);
  const int c = static_cast<int>(p.i("C"));
  const bool bias = p.i_or("bias", 0) != 0;
  const auto conv_c = [&](const RefTensor& in, int k, Act act) { return r.conv(in, k, k, c, act, 1, bias); };
  RefTensor y;
  const std::string is = technique + "/" + structure;
  if (is == "block_stack7/stacked3x3" || is == "block_stack5/stacked3x3") {
    // VGG: n 3x3 layers C -> C, relu between them; n = 3 for a 7x7 field, 2 for 5x5.
    const int n = technique == "block_stack7" ? 3 : 2;
    y = x;
    for (int i = 0; i < n; ++i) y = conv_c(y, 3, i + 1 < n ? Act::relu : Act::none);
  } else if (is == "block_stack7/single7x7") {
    y = conv_c(x, 7, Act::none);
  } else if (is == "block_stack5/single5x5") {
    y = conv_c(x, 5, Act::none);
  } else if (is == "block_asym/1x3_3x1") {  // Inception-v3: 1x3 then 3x1, C -> C
    y = r.conv(r.conv(x, 1, 3, c), 3, 1, c);
  } else if (is == "block_asym/3x3" || is == "block_bottleneck/standard3x3" || is == "block_separable/standard3x3" ||
             is == "block_group/standard3x3" || is == "block_ghost/standard3x3") {
    y = r.conv(x, 3, 3, c);
  } else if (is == "block_bottleneck/bottleneck") {  // 1x1 C -> K (relu), 3x3 K -> C
    y = r.conv(r.conv(x, 1, 1, static_cast<int>(p.i("K")), Act::relu), 3, 3, c);
  } else if (is == "block_separable/separable") {  // MobileNet: depthwise 3x3 (relu), pointwise 1x1
    y = r.conv(r.conv(x, 3, 3, c, Act::relu, c), 1, 1, c);
  } else if (is == "block_group/grouped") {
    y = r.conv(x, 3, 3, c, Act::none, static_cast<int>(p.i("g")));
  } else if (is == "block_ghost/ghost") {
    // GhostNet: m = ceil(C/s) intrinsic maps (3x3, relu), s-1 cheap d x d maps
    // of each (depthwise, relu), both concatenated, the first C kept.
    const int s = static_cast<int>(p.i("s")), d = static_cast<int>(p.i("d"));
    const int m = (c + s - 1) / s;
    const RefTensor primary = r.conv(x, 3, 3, m, Act::relu);
    const RefTensor cheap = r.conv(primary, d, d, m * (s - 1), Act::relu, m);
    y = BlockRef<T>::concat({&primary, &cheap}, c);
  } else if (is == "block_residual/residual") {  // ResNet basic block: relu(x + conv(relu(conv(x))))
    y = r.add(x, r.conv(r.conv(x, 3, 3, c, Act::relu), 3, 3, c), Act::relu);
  } else if (is == "block_residual/plain") {
    y = r.conv(r.conv(x, 3, 3, c, Act::relu), 3, 3, c, Act::relu);
  } else if (is == "block_dense/dense") {  // DenseNet: [x, y1, y2], y1 = f(x), y2 = f([x, y1])
    const int g = static_cast<int>(p.i("G"));
    const RefTensor y1 = r.conv(x, 3, 3, g, Act::relu);
    const RefTensor x1 = BlockRef<T>::concat({&x, &y1});
    const RefTensor y2 = r.conv(x1, 3, 3, g, Act::relu);
    y = BlockRef<T>::concat({&x, &y1, &y2});
  } else if (is == "block_dense/plain_wide") {
    const int g = static_cast<int>(p.i("G"));
    y = r.conv(r.conv(x, 3, 3, c + g, Act::relu), 3, 3, c + 2 * g, Act::relu);
  } else if (is == "block_inception/inception") {  // 1x1, 3x3, 5x5 branches (relu): C/4, C/2, the rest
    const RefTensor a = r.conv(x, 1, 1, c / 4, Act::relu);
    const RefTensor b = r.conv(x, 3, 3, c / 2, Act::relu);
    const RefTensor e = r.conv(x, 5, 5, c - c / 4 - c / 2, Act::relu);
    y = BlockRef<T>::concat({&a, &b, &e});
  } else if (is == "block_inception/single5x5") {
    y = r.conv(x, 5, 5, c, Act::relu);
  } else if (is == "block_se/conv_se" || is == "block_se/conv") {
    // SE (Hu et al. 2018): u = relu(conv3x3(x)); z = sigmoid(W2 relu(W1 mean(u) + b1) + b2); u * z.
    const RefTensor u3 = r.conv(x, 3, 3, c, Act::relu);
    if (structure == "conv") {
      y = u3;
    } else {
      const int cr = std::max(1, c / static_cast<int>(p.i("r")));
      const RefTensor z = r.conv(r.conv(r.mean(u3), 1, 1, cr, Act::relu, 1, true), 1, 1, c, Act::sigmoid, 1, true);
      y = r.scale(u3, z);
    }
  } else {
    throw std::runtime_error("block reference: no definition of " + is);
  }
  r.all_used();
  return y;
}

}  // namespace sp::reference
