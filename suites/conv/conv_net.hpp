#pragma once
// A block as data: a small DAG of layers (conv, concat, add, pool, scale)
// over one input. Shapes are inferred (and each conv validated) as nodes are
// added; the executor (net_exec.hpp) allocates and runs it, the reference
// (net_reference.hpp) evaluates it with the plain-loop primitives.
// Receptive fields are composed here from the layers, FLOPs counted from
// them; parameters are counted from the allocated weights by the executor.
#include <string>
#include <vector>

#include "kernels/conv/conv_spec.hpp"

namespace sp::conv {

enum class Op { input, conv, concat, add, pool, scale };

struct Node {
  Op op = Op::input;
  ConvSpec spec;            // conv
  std::vector<int> in;      // producer nodes
  Act act = Act::none;      // add
  int c = 0, h = 0, w = 0;  // output shape (batch is the net's)
  // Receptive field (rows, cols) of one output element in the net's input and
  // the distance in input pixels between adjacent outputs (product of strides).
  int rf_h = 1, rf_w = 1, jump = 1;
  bool global = false;  // depends on the whole plane (after a global pool)
};

class Net {
 public:
  Net(int n, int c, int h, int w);
  int conv(int x, const ConvSpec& s);
  int concat(const std::vector<int>& xs, int keep = 0);  // keep > 0: truncate to the first keep channels
  int add(int a, int b, Act act = Act::none);
  int pool(int x);          // global average pool -> C x 1 x 1
  int scale(int x, int s);  // x * s per channel (s is C x 1 x 1)

  int batch() const { return n_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& out() const { return nodes_.back(); }
  int out_id() const { return static_cast<int>(nodes_.size()) - 1; }

  double conv_macs() const;                 // multiply-adds of all conv layers (FLOPs = 2 MACs, docs/conv.md)
  double other_flops() const;               // bias adds, residual adds, pooling, scaling
  double activation_bytes(int elem) const;  // every node's output written once, inputs read once
  std::string describe() const;

 private:
  int push(Node nd);
  int n_;
  std::vector<Node> nodes_;
};

}  // namespace sp::conv
