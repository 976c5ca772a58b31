#ifdef SP_HAVE_ONEDNN
#include "suites/conv/onednn_conv.hpp"

#include <dnnl.hpp>

namespace sp::conv {

namespace {
dnnl::engine& cpu_engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}
}  // namespace

struct OnednnConv::Impl {
  dnnl::stream strm{cpu_engine()};
  dnnl::convolution_forward prim;
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::memory src, wts, bias, dst;
  bool has_bias = false;
};

OnednnConv::OnednnConv(const ConvSpec& s, int n, int h, int w, const float* in, const float* wts, const float* bias,
                       float* out)
    : p_(new Impl) {
  using dnnl::memory;
  using tag = memory::format_tag;
  const auto f32 = memory::data_type::f32;
  auto& eng = cpu_engine();
  const memory::dims src_d = {n, s.c_in, h, w}, dst_d = {n, s.c_out, s.out_h(h), s.out_w(w)};
  const memory::dims w_d = s.groups == 1 ? memory::dims{s.c_out, s.c_in, s.kh, s.kw}
                                         : memory::dims{s.groups, s.cout_g(), s.cin_g(), s.kh, s.kw};
  const memory::desc src_md(src_d, f32, tag::nchw), dst_md(dst_d, f32, tag::nchw);
  const memory::desc w_md(w_d, f32, s.groups == 1 ? tag::oihw : tag::goihw);
  const memory::desc b_md({s.c_out}, f32, tag::x);
  p_->has_bias = s.bias;
  const auto d = s.bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                          dnnl::algorithm::convolution_direct, src_md, w_md, b_md,
                                                          dst_md, {s.stride, s.stride}, {s.pad_h, s.pad_w},
                                                          {s.pad_h, s.pad_w})
                        : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                          dnnl::algorithm::convolution_direct, src_md, w_md, dst_md,
                                                          {s.stride, s.stride}, {s.pad_h, s.pad_w}, {s.pad_h, s.pad_w});
  dnnl::primitive_attr attr;
  if (s.act != Act::none) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.f, s.act == Act::relu ? dnnl::algorithm::eltwise_relu : dnnl::algorithm::eltwise_logistic,
                       0.f, 0.f);
    attr.set_post_ops(ops);
  }
  p_->pd = dnnl::convolution_forward::primitive_desc(d, attr, eng);
  p_->prim = dnnl::convolution_forward(p_->pd);
  p_->src = memory(src_md, eng, const_cast<float*>(in));
  p_->wts = memory(w_md, eng, const_cast<float*>(wts));
  if (s.bias) p_->bias = memory(b_md, eng, const_cast<float*>(bias));
  p_->dst = memory(dst_md, eng, out);
}

OnednnConv::~OnednnConv() = default;

void OnednnConv::run() {
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, p_->src}, {DNNL_ARG_WEIGHTS, p_->wts}, {DNNL_ARG_DST, p_->dst}};
  if (p_->has_bias) args[DNNL_ARG_BIAS] = p_->bias;
  p_->prim.execute(p_->strm, args);
  p_->strm.wait();
}

std::string OnednnConv::impl() const { return p_->pd.impl_info_str(); }

}  // namespace sp::conv
#endif
