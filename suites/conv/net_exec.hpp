#pragma once
// Allocates and runs a Net: weights filled deterministically (kept on the
// host too, for the reference), one activation tensor per node, and the
// convolutions done by one back end: the project's direct kernel, im2col +
// the project's GEMM, oneDNN (fp32, host memory; in its chosen layout or on
// the plain tensors) or cuDNN (fp32, device memory). Parameters are counted
// from what is allocated here, not from a formula.
//
// oneDNN in its chosen layout keeps a conv's output in that layout when the
// next conv reads it; a reorder to the plain tensor happens in run() only
// where a Kokkos op (add, pool, scale, concat) or a conv in another layout
// reads it. The block's edges are outside run(): the input is reordered at
// bind(), the output by sync_output().
#include <Kokkos_Core.hpp>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/conv/block_ops.hpp"
#include "kernels/conv/conv_dispatch.hpp"
#include "kernels/conv/conv_im2col.hpp"
#include "suites/conv/conv_net.hpp"
#include "suites/conv/fill_values.hpp"
#include "suites/conv/cudnn_conv.hpp"
#include "suites/conv/onednn_conv.hpp"

namespace sp::conv {

enum class Backend { direct, im2col, onednn, onednn_plain, cudnn };

inline bool is_onednn(Backend be) { return be == Backend::onednn || be == Backend::onednn_plain; }

inline void append_distinct(std::string& list, const std::string& item) {
  if (list.find(item) == std::string::npos) list += (list.empty() ? "" : "; ") + item;
}

// What oneDNN picks for the convs of a net on this machine, without running
// it (the same description NetExec::onednn_impl gives for what ran).
inline std::string onednn_choice(const Net& net, Backend be) {
  std::string out;
#ifdef SP_HAVE_ONEDNN
  const auto& nodes = net.nodes();
  for (size_t i = 1; i < nodes.size(); ++i) {
    if (nodes[i].op != Op::conv) continue;
    const Node& a = nodes[nodes[i].in[0]];
    append_distinct(out, OnednnConv::describe(nodes[i].spec, net.batch(), a.h, a.w,
                                              be == Backend::onednn ? OnednnLayout::best : OnednnLayout::plain));
  }
#else
  (void)net, (void)be;
#endif
  return out;
}

template <class T>
class NetExec {
 public:
  NetExec(const Net& net, Backend be, uint64_t seed) : net_(net), be_(be) {
    const auto& nodes = net_.nodes();
    w_.resize(nodes.size()), b_.resize(nodes.size()), hw_.resize(nodes.size()), hb_.resize(nodes.size());
    act_.resize(nodes.size());
    int64_t col = 0;
    for (size_t i = 1; i < nodes.size(); ++i) {
      const Node& nd = nodes[i];
      act_[i] = Tensor<T>("conv_act", net_.batch(), nd.c, nd.h, nd.w);
      if (nd.op != Op::conv) continue;
      const ConvSpec& s = nd.spec;
      hw_[i] = fill_values<T>(s.weight_count(), seed + 31 * i, double(s.macs_per_output()));
      w_[i] = Tensor<T>("conv_w", s.c_out, s.cin_g(), s.kh, s.kw);
      copy_in(w_[i], hw_[i]);
      if (s.bias) {
        hb_[i] = fill_values<T>(s.c_out, seed + 31 * i + 7, 4.0);
        b_[i] = Vec<T>("conv_b", s.c_out);
        Kokkos::deep_copy(b_[i], Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                                     hb_[i].data(), hb_[i].size()));
      }
      const Node& a = nodes[nd.in[0]];
      // im2col's workspace: a chunk of images' unrolled matrices (conv_im2col.hpp sizes the chunk).
      col = std::max(col, im2col_chunk<T>(s, net_.batch(), a.h, a.w) * im2col_rows(s) * im2col_cols(s, a.h, a.w));
    }
    if (be_ == Backend::im2col) col_ = Kokkos::View<T**, Kokkos::LayoutRight>("conv_col", 1, col);
  }

  // Binds the input tensor (its storage must outlive this object); a vendor
  // back end builds one primitive per conv layer on the bound pointers.
  void bind(Tensor<T> x) {
    act_[0] = x;
    if constexpr (std::is_same<T, float>::value) {
#ifdef SP_HAVE_CUDNN
      if (be_ == Backend::cudnn) make_vendor(cudnn_);
#endif
#ifdef SP_HAVE_ONEDNN
      if (is_onednn(be_)) {
        make_vendor(onednn_, be_ == Backend::onednn ? OnednnLayout::best : OnednnLayout::plain);
        link_onednn();
      }
#endif
    }
  }

  void run() {
    const auto& nodes = net_.nodes();
    for (size_t i = 1; i < nodes.size(); ++i) {
      const Node& nd = nodes[i];
      switch (nd.op) {
        case Op::conv: run_conv(i); break;
        case Op::add: add_act<T>(act_[nd.in[0]], act_[nd.in[1]], act_[i], nd.act); break;
        case Op::pool: global_avg_pool<T>(act_[nd.in[0]], act_[i]); break;
        case Op::scale: scale_channels<T>(act_[nd.in[0]], act_[nd.in[1]], act_[i]); break;
        case Op::concat: {
          int c0 = 0;
          for (int x : nd.in) {
            const int take = std::min(static_cast<int>(act_[x].extent(1)), nd.c - c0);
            if (take > 0) copy_channels<T>(act_[x], 0, act_[i], c0, take);
            c0 += take;
          }
          break;
        }
        case Op::input: break;
      }
    }
  }

  // The output in plain NCHW: a vendor back end that keeps its own layout
  // writes it back here, outside the timed run().
  void sync_output() {
#ifdef SP_HAVE_ONEDNN
    if constexpr (std::is_same<T, float>::value)
      if (is_onednn(be_) && onednn_.back()) onednn_.back()->store_dst();
#endif
  }
  Tensor<T> output() const { return act_.back(); }
  const Net& net() const { return net_; }
  const std::vector<T>& host_weights(size_t node) const { return hw_[node]; }
  const std::vector<T>& host_bias(size_t node) const { return hb_[node]; }

  // Parameters as allocated: every weight and bias element of every layer.
  int64_t params_allocated() const {
    int64_t p = 0;
    for (size_t i = 0; i < w_.size(); ++i) p += static_cast<int64_t>(w_[i].size() + b_[i].size());
    return p;
  }
  // What oneDNN picked for this net's convs (distinct choices, "; "-joined).
  std::string onednn_impl() const {
    std::string out;
#ifdef SP_HAVE_ONEDNN
    if constexpr (std::is_same<T, float>::value)
      for (auto& o : onednn_)
        if (o) append_distinct(out, o->impl());
#endif
    return out;
  }
  // What cuDNN picked for this net's convs (distinct choices, "; "-joined).
  std::string cudnn_impl() const {
    std::string out;
#ifdef SP_HAVE_CUDNN
    for (auto& c : cudnn_)
      if (c) append_distinct(out, c->impl());
#endif
    return out;
  }

 private:
  static void copy_in(Tensor<T> v, const std::vector<T>& h) {
    Kokkos::deep_copy(
        v, Kokkos::View<const T****, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
               h.data(), v.extent(0), v.extent(1), v.extent(2), v.extent(3)));
  }

  template <class Vendor, class... Mode>
  void make_vendor(std::vector<std::unique_ptr<Vendor>>& prims, Mode... mode) {
    const auto& nodes = net_.nodes();
    prims.clear();
    prims.resize(nodes.size());
    for (size_t i = 1; i < nodes.size(); ++i) {
      if (nodes[i].op != Op::conv) continue;
      const Node& a = nodes[nodes[i].in[0]];
      prims[i] = std::make_unique<Vendor>(nodes[i].spec, net_.batch(), a.h, a.w, mode..., act_[nodes[i].in[0]].data(),
                                          w_[i].data(), b_[i].data(), act_[i].data());
    }
  }

#ifdef SP_HAVE_ONEDNN
  // Which conv reads its producer's memory directly, which reorders its
  // input in run(), which writes its output back to the plain tensor in run().
  void link_onednn() {
    const auto& nodes = net_.nodes();
    load_.assign(nodes.size(), false), store_.assign(nodes.size(), false);
    std::vector<bool> chained(nodes.size(), false);
    for (size_t i = 1; i < nodes.size(); ++i) {
      if (nodes[i].op != Op::conv) continue;
      const int j = nodes[i].in[0];
      chained[i] = j > 0 && nodes[j].op == Op::conv && onednn_[i]->chain_from(*onednn_[j]);
      if (j == 0)
        onednn_[i]->load_src();  // the block's input: constant, reordered once
      else
        load_[i] = !chained[i];
    }
    for (size_t i = 1; i + 1 < nodes.size(); ++i) {
      if (nodes[i].op != Op::conv || onednn_[i]->dst_is_plain()) continue;
      for (size_t k = i + 1; k < nodes.size(); ++k)
        for (int x : nodes[k].in)
          if (x == static_cast<int>(i) && !(nodes[k].op == Op::conv && chained[k])) store_[i] = true;
    }
  }
#endif

  void run_conv(size_t i) {
    const Node& nd = net_.nodes()[i];
    if (be_ == Backend::direct) {
      conv2d_dispatch<T>(nd.spec, act_[nd.in[0]], w_[i], b_[i], act_[i]);  // depthwise, 1x1 or general
    } else if (be_ == Backend::im2col) {
      conv2d_im2col<T>(nd.spec, act_[nd.in[0]], w_[i], b_[i], act_[i], col_);
    } else if (is_onednn(be_)) {
#ifdef SP_HAVE_ONEDNN
      if constexpr (std::is_same<T, float>::value) {
        if (load_[i]) onednn_[i]->load_src();
        onednn_[i]->run();
        if (store_[i]) onednn_[i]->store_dst();
      }
#endif
    } else {
#ifdef SP_HAVE_CUDNN
      if constexpr (std::is_same<T, float>::value) cudnn_[i]->run();
#endif
    }
  }

  Net net_;
  Backend be_;
  std::vector<Tensor<T>> act_, w_;
  std::vector<Vec<T>> b_;
  std::vector<std::vector<T>> hw_, hb_;
  Kokkos::View<T**, Kokkos::LayoutRight> col_;
#ifdef SP_HAVE_ONEDNN
  std::vector<std::unique_ptr<OnednnConv>> onednn_;
  std::vector<bool> load_, store_;
#endif
#ifdef SP_HAVE_CUDNN
  std::vector<std::unique_ptr<CudnnConv>> cudnn_;
#endif
};

}  // namespace sp::conv
