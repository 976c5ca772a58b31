#include "suites/conv/conv_net.hpp"

#include <algorithm>

#include "scaleproof/params.hpp"

namespace sp::conv {

Net::Net(int n, int c, int h, int w) : n_(n) {
  Node in;
  in.op = Op::input;
  in.c = c, in.h = h, in.w = w;
  nodes_.push_back(in);
}

int Net::push(Node nd) {
  nodes_.push_back(nd);
  return static_cast<int>(nodes_.size()) - 1;
}

int Net::conv(int x, const ConvSpec& s) {
  const Node& a = nodes_.at(x);
  if (a.c != s.c_in)
    throw InputError("conv block: layer " + conv::describe(s) + " gets " + std::to_string(a.c) + " channels");
  validate(s, a.h, a.w, "conv layer " + conv::describe(s));
  Node nd;
  nd.op = Op::conv;
  nd.spec = s;
  nd.in = {x};
  nd.c = s.c_out, nd.h = s.out_h(a.h), nd.w = s.out_w(a.w);
  // Composition: each layer widens the field by (k - 1) input-steps of the
  // current jump, and multiplies the jump by its stride.
  nd.rf_h = a.rf_h + (s.kh - 1) * a.jump;
  nd.rf_w = a.rf_w + (s.kw - 1) * a.jump;
  nd.jump = a.jump * s.stride;
  nd.global = a.global;
  return push(nd);
}

int Net::concat(const std::vector<int>& xs, int keep) {
  Node nd;
  nd.op = Op::concat;
  nd.in = xs;
  const Node& a = nodes_.at(xs.at(0));
  nd.h = a.h, nd.w = a.w, nd.jump = a.jump;
  for (int x : xs) {
    const Node& b = nodes_.at(x);
    if (b.h != a.h || b.w != a.w) throw InputError("conv block: concatenated branches differ in spatial size");
    nd.c += b.c;
    nd.rf_h = std::max(nd.rf_h, b.rf_h), nd.rf_w = std::max(nd.rf_w, b.rf_w);
    nd.global = nd.global || b.global;
  }
  if (keep > 0) nd.c = std::min(nd.c, keep);
  nd.act = Act::none;
  return push(nd);
}

int Net::add(int x, int y, Act act) {
  const Node &a = nodes_.at(x), &b = nodes_.at(y);
  if (a.c != b.c || a.h != b.h || a.w != b.w) throw InputError("conv block: residual add of different shapes");
  Node nd = a;
  nd.op = Op::add;
  nd.in = {x, y};
  nd.act = act;
  nd.rf_h = std::max(a.rf_h, b.rf_h), nd.rf_w = std::max(a.rf_w, b.rf_w);
  nd.global = a.global || b.global;
  return push(nd);
}

int Net::pool(int x) {
  Node nd = nodes_.at(x);
  nd.op = Op::pool;
  nd.in = {x};
  nd.h = nd.w = 1;
  nd.global = true;
  return push(nd);
}

int Net::scale(int x, int s) {
  const Node &a = nodes_.at(x), &b = nodes_.at(s);
  if (b.c != a.c || b.h != 1 || b.w != 1) throw InputError("conv block: scale needs C x 1 x 1 weights");
  Node nd = a;
  nd.op = Op::scale;
  nd.in = {x, s};
  nd.global = true;
  return push(nd);
}

double Net::conv_macs() const {
  double m = 0;
  for (auto& nd : nodes_)
    if (nd.op == Op::conv) m += double(n_) * nd.c * nd.h * nd.w * nd.spec.macs_per_output();
  return m;
}

double Net::other_flops() const {
  double f = 0;
  for (auto& nd : nodes_) {
    const double outs = double(n_) * nd.c * nd.h * nd.w;
    if (nd.op == Op::conv && nd.spec.bias) f += outs;
    if (nd.op == Op::add || nd.op == Op::scale) f += outs;
    if (nd.op == Op::pool) f += double(n_) * nodes_[nd.in[0]].c * nodes_[nd.in[0]].h * nodes_[nd.in[0]].w;
  }
  return f;
}

double Net::activation_bytes(int elem) const {
  double b = 0;
  for (auto& nd : nodes_) {
    if (nd.op == Op::input) continue;
    b += double(n_) * nd.c * nd.h * nd.w;  // written once
    for (int x : nd.in) {                  // each input read once (concat reads only what it keeps)
      const Node& a = nodes_[x];
      b += double(n_) * (nd.op == Op::concat ? std::min(a.c, nd.c) : a.c) * a.h * a.w;
    }
  }
  return b * elem;
}

std::string Net::describe() const {
  std::string d;
  for (auto& nd : nodes_)
    if (nd.op == Op::conv) d += (d.empty() ? "" : ", ") + conv::describe(nd.spec);
  return d;
}

}  // namespace sp::conv
