#pragma once
// The reference of a whole block, composed from the plain-loop primitives of
// reference/conv/conv_ref.hpp node by node, with the error bound of every
// element propagated through the layers (see that header).
#include <vector>

#include "reference/conv/conv_ref.hpp"
#include "suites/conv/net_exec.hpp"

namespace sp::conv {

template <class T>
reference::RefTensor net_reference(const NetExec<T>& ex, const std::vector<T>& input, double u) {
  const Net& net = ex.net();
  const auto& nodes = net.nodes();
  std::vector<reference::RefTensor> t(nodes.size());
  t[0].resize(net.batch(), nodes[0].c, nodes[0].h, nodes[0].w);
  for (size_t i = 0; i < input.size(); ++i) t[0].v[i] = input[i];
  for (size_t i = 1; i < nodes.size(); ++i) {
    const Node& nd = nodes[i];
    switch (nd.op) {
      case Op::conv: t[i] = reference::conv_ref<T>(nd.spec, t[nd.in[0]], ex.host_weights(i), ex.host_bias(i), u); break;
      case Op::add: t[i] = reference::add_ref(t[nd.in[0]], t[nd.in[1]], nd.act, u); break;
      case Op::pool: t[i] = reference::mean_ref(t[nd.in[0]], u); break;
      case Op::scale: t[i] = reference::scale_ref(t[nd.in[0]], t[nd.in[1]], u); break;
      case Op::concat: {
        t[i].resize(net.batch(), nd.c, nd.h, nd.w);
        int c0 = 0;
        for (int x : nd.in) {
          const int take = std::min(t[x].c, nd.c - c0);
          if (take > 0) reference::copy_channels_ref(t[x], 0, t[i], c0, take);
          c0 += take;
        }
        break;
      }
      case Op::input: break;
    }
    // Free what no later node reads.
    for (int x : nd.in) {
      bool used = false;
      for (size_t j = i + 1; j < nodes.size(); ++j)
        for (int y : nodes[j].in) used = used || y == x;
      if (!used && x != 0) t[x] = {};
    }
  }
  return t.back();
}

}  // namespace sp::conv
