#ifdef SP_HAVE_ONEDNN
#include "suites/conv/onednn_conv.hpp"

#include <dnnl.hpp>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "scaleproof/host.hpp"
#include "scaleproof/vendors.hpp"
#include "suites/conv/onednn_isa.hpp"

namespace sp::conv {

namespace {

using dnnl::memory;
using tag = memory::format_tag;

dnnl::engine& cpu_engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

struct Descs {
  memory::desc src, wts, bias, dst;  // the plain tensors the caller owns
};

Descs plain_descs(const ConvSpec& s, int n, int h, int w) {
  const auto f32 = memory::data_type::f32;
  const memory::dims w_d = s.groups == 1 ? memory::dims{s.c_out, s.c_in, s.kh, s.kw}
                                         : memory::dims{s.groups, s.cout_g(), s.cin_g(), s.kh, s.kw};
  return {memory::desc({n, s.c_in, h, w}, f32, tag::nchw),
          memory::desc(w_d, f32, s.groups == 1 ? tag::oihw : tag::goihw), memory::desc({s.c_out}, f32, tag::x),
          memory::desc({n, s.c_out, s.out_h(h), s.out_w(w)}, f32, tag::nchw)};
}

dnnl::convolution_forward::primitive_desc make_pd(const ConvSpec& s, const Descs& d, OnednnLayout layout) {
  const bool best = layout == OnednnLayout::best;
  const auto any = [&](const memory::desc& m) {
    return best ? memory::desc(m.dims(), memory::data_type::f32, tag::any) : m;
  };
  const memory::desc src = any(d.src), wts = any(d.wts), dst = any(d.dst);
  const auto alg = dnnl::algorithm::convolution_direct;
  const auto prop = dnnl::prop_kind::forward_inference;
  const memory::dims stride = {s.stride, s.stride}, pad = {s.pad_h, s.pad_w};
  const auto cd = s.bias ? dnnl::convolution_forward::desc(prop, alg, src, wts, d.bias, dst, stride, pad, pad)
                         : dnnl::convolution_forward::desc(prop, alg, src, wts, dst, stride, pad, pad);
  dnnl::primitive_attr attr;
  if (s.act != Act::none) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.f, s.act == Act::relu ? dnnl::algorithm::eltwise_relu : dnnl::algorithm::eltwise_logistic, 0.f,
                       0.f);
    attr.set_post_ops(ops);
  }
  return dnnl::convolution_forward::primitive_desc(cd, attr, cpu_engine());
}

// The activation layout by its oneDNN tag name where it is one of the usual ones.
std::string layout_name(const memory::desc& m) {
  const std::pair<tag, const char*> known[] = {{tag::nchw, "nchw"},
                                               {tag::nhwc, "nhwc"},
                                               {tag::nChw8c, "nChw8c"},
                                               {tag::nChw16c, "nChw16c"},
                                               {tag::nChw4c, "nChw4c"}};
  for (auto& [t, name] : known)
    if (memory::desc(m.dims(), m.data_type(), t) == m) return name;
  return "blocked";
}

std::string describe_pd(const dnnl::convolution_forward::primitive_desc& pd) {
  return std::string(pd.impl_info_str()) + " " + layout_name(pd.src_desc());
}

}  // namespace

struct OnednnConv::Impl {
  dnnl::stream strm{cpu_engine()};
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward prim;
  memory user_src, user_dst;   // the caller's plain tensors
  memory src, wts, bias, dst;  // what the primitive reads and writes
  bool has_bias = false;
};

OnednnConv::OnednnConv(const ConvSpec& s, int n, int h, int w, OnednnLayout layout, const float* in, const float* wts,
                       const float* bias, float* out)
    : p_(new Impl) {
  auto& eng = cpu_engine();
  const Descs d = plain_descs(s, n, h, w);
  p_->pd = make_pd(s, d, layout);
  p_->prim = dnnl::convolution_forward(p_->pd);
  p_->user_src = memory(d.src, eng, const_cast<float*>(in));
  p_->user_dst = memory(d.dst, eng, out);
  p_->src = p_->pd.src_desc() == d.src ? p_->user_src : memory(p_->pd.src_desc(), eng);
  p_->dst = p_->pd.dst_desc() == d.dst ? p_->user_dst : memory(p_->pd.dst_desc(), eng);
  memory user_wts(d.wts, eng, const_cast<float*>(wts));
  if (p_->pd.weights_desc() == d.wts) {
    p_->wts = user_wts;
  } else {  // weights are constant: reordered once, as a framework does at load time
    p_->wts = memory(p_->pd.weights_desc(), eng);
    dnnl::reorder(user_wts, p_->wts).execute(p_->strm, user_wts, p_->wts);
    p_->strm.wait();
  }
  p_->has_bias = s.bias;
  if (s.bias) p_->bias = memory(d.bias, eng, const_cast<float*>(bias));
}

OnednnConv::~OnednnConv() = default;

void OnednnConv::load_src() {
  if (p_->src == p_->user_src) return;
  dnnl::reorder(p_->user_src, p_->src).execute(p_->strm, p_->user_src, p_->src);
  p_->strm.wait();
}

void OnednnConv::run() {
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, p_->src}, {DNNL_ARG_WEIGHTS, p_->wts}, {DNNL_ARG_DST, p_->dst}};
  if (p_->has_bias) args[DNNL_ARG_BIAS] = p_->bias;
  p_->prim.execute(p_->strm, args);
  p_->strm.wait();
}

void OnednnConv::store_dst() {
  if (p_->dst == p_->user_dst) return;
  dnnl::reorder(p_->dst, p_->user_dst).execute(p_->strm, p_->dst, p_->user_dst);
  p_->strm.wait();
}

bool OnednnConv::chain_from(const OnednnConv& producer) {
  if (!(producer.p_->pd.dst_desc() == p_->pd.src_desc())) return false;
  p_->src = producer.p_->dst;
  return true;
}

bool OnednnConv::dst_is_plain() const { return p_->dst == p_->user_dst; }

std::string OnednnConv::impl() const { return describe_pd(p_->pd); }

std::string OnednnConv::describe(const ConvSpec& s, int n, int h, int w, OnednnLayout layout) {
  return describe_pd(make_pd(s, plain_descs(s, n, h, w), layout));
}

namespace {

// oneDNN as the manifest records it. Its OpenMP runtime is the one Kokkos
// initialized with the run's threads, so it already runs on those threads:
// recorded, not set.
sp::VendorFacts describe_onednn(int) {
  const dnnl_version_t* v = dnnl_version();
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  const unsigned isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  sp::VendorFacts facts = {
      {"version", std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch)},
      {"threads", std::to_string(threads)},
      {"threads_rule", "shares Kokkos's OpenMP runtime: omp_get_max_threads()"},
      {"isa", onednn_isa_name(isa)},
      {"layout",
       "conv baselines: format_tag::any (oneDNN's choice, per case in verdicts' notes); "
       "*_onednn_plain: nchw/oihw"}};
  const std::string shortfall = onednn_isa_shortfall(isa, sp::host_cpu_vectors());
  if (!shortfall.empty()) facts.push_back({sp::kVendorNotAtBest, shortfall});
  return facts;
}

SP_REGISTER_VENDOR("onednn", describe_onednn);

}  // namespace

}  // namespace sp::conv
#endif
