#include "suites/conv/conv_technique.hpp"

#include "reference/conv/block_ref.hpp"

#include <algorithm>
#include <cmath>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "scaleproof/compare.hpp"
#include "scaleproof/kokkos_compat.hpp"
#include "suites/conv/net_reference.hpp"

namespace sp::conv {

bool onednn_usable(bool fp32) {
#ifdef SP_HAVE_ONEDNN
  // oneDNN's CPU engine reads host memory; with a device back end it is not offered.
  return fp32 && Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible;
#else
  (void)fp32;
  return false;
#endif
}

bool cudnn_usable(bool fp32) {
#ifdef SP_HAVE_CUDNN
  return fp32 &&
         !Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible;
#else
  (void)fp32;
  return false;
#endif
}

bool usable(Backend be, bool fp32) {
  return is_onednn(be) ? onednn_usable(fp32) : be == Backend::cudnn ? cudnn_usable(fp32) : true;
}

int pad_of(const Params& p, int k) {
  if (p.s("pad") == "same") return (k - 1) / 2;
  return static_cast<int>(p.i("pad"));
}

Act act_of(const Params& p) {
  const std::string a = p.s_or("act", "none");
  if (a == "none") return Act::none;
  if (a == "relu") return Act::relu;
  if (a == "sigmoid") return Act::sigmoid;
  throw InputError("unknown activation '" + a + "' (none, relu or sigmoid)");
}

namespace {

uint64_t seed_of(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across runs and builds
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

Verdict row(const std::string& tech, const std::string& variant, const Params& p, const std::string& quantity,
            const std::string& unit, double predicted, double measured) {
  Verdict v{tech, variant, p.label(), quantity, unit};
  v.predicted = predicted;
  v.measured = measured;
  v.ratio = predicted != 0 ? measured / predicted : 0;
  return v;
}

}  // namespace

template <class T>
ConvTechnique<T>::ConvTechnique(Declaration d) : Technique(d.info), decl_(std::move(d)) {
  const bool fp32 = std::is_same<T, float>::value;
  info_.variants.clear();
  info_.baseline.clear();
  info_.headline = {kHeadlineVsBaseline};
  // The baseline is the declared oneDNN variant on a host build, cuDNN on a CUDA build.
  for (auto& v : decl_.defs) {
    if (!usable(v.be, fp32)) continue;
    info_.variants.push_back(is_onednn(v.be)          ? Variant::vendor(v.name, "onednn", MemoryNeed::host)
                             : v.be == Backend::cudnn ? Variant::vendor(v.name, "cudnn", MemoryNeed::device)
                                                      : Variant::kernel(v.name));
    if (v.be == Backend::cudnn || v.name == decl_.baseline_def) info_.baseline = v.name;
  }
  // oneDNN on the plain tensors runs the baseline's structure too: the
  // throughput verdict takes whichever of the two layouts is faster.
  info_.baseline_alternatives.clear();
  for (auto& v : decl_.defs)
    if (v.be == Backend::onednn_plain && usable(v.be, fp32) && !info_.baseline.empty() &&
        is_onednn(def(info_.baseline).be) && v.structure == def(info_.baseline).structure)
      info_.baseline_alternatives.push_back(v.name);
}

template <class T>
std::vector<std::string> ConvTechnique<T>::available_variants() const {
  std::vector<std::string> v;
  for (auto& d : decl_.defs)
    if (usable(d.be, std::is_same<T, float>::value)) v.push_back(d.name);
  return v;
}

template <class T>
const VariantDef& ConvTechnique<T>::def(const std::string& variant) const {
  for (auto& d : decl_.defs)
    if (d.name == variant) return d;
  throw InputError(info_.name + ": no variant '" + variant + "'");
}

template <class T>
void ConvTechnique<T>::validate(const Params& p, int nranks) const {
  // Sizes must be positive; pad may be 0 (and "same"), bias is 0/1, act a name.
  for (auto& [k, v] : p.items()) {
    if (k == "pad" || k == "act" || k == "dtype") continue;
    if (k == "bias") {
      if (v != "0" && v != "1") throw InputError(info_.name + ": bias must be 0 or 1 (got " + v + ")");
      continue;
    }
    if (p.i(k) <= 0) throw InputError(info_.name + ": " + k + " must be > 0 (got " + v + ")");
  }
  if (!info_.ranks.accepts(nranks)) throw InputError(info_.name + " cannot use " + std::to_string(nranks) + " rank(s)");
  try {
    for (auto& d : decl_.defs) d.build(p);
  } catch (const InputError& e) {
    throw InputError(info_.name + ": " + e.what());
  }
}

template <class T>
Counts ConvTechnique<T>::counts_of(const Net& net) const {
  Counts c;
  c.dtype = std::is_same<T, float>::value ? "fp32" : "fp64";
  c.flops = 2 * net.conv_macs() + net.other_flops();
  double params = 0;
  for (auto& nd : net.nodes())
    if (nd.op == Op::conv) params += double(nd.spec.weight_count()) + (nd.spec.bias ? nd.spec.c_out : 0);
  // Compulsory traffic of a layer-by-layer execution: weights once, the
  // block's input read, every intermediate written once and read by its consumers.
  const auto& o = net.out();
  const double out_bytes = double(net.batch()) * o.c * o.h * o.w * sizeof(T);
  c.bytes_written = out_bytes;
  c.bytes_read = params * sizeof(T) + net.activation_bytes(sizeof(T)) - out_bytes;
  return c;
}

template <class T>
Counts ConvTechnique<T>::counts(const Params& p, int) const {
  return counts_of(decl_.defs.front().build(p));
}

template <class T>
void ConvTechnique<T>::setup(const Params& p, int) {
  params_ = p;
  const Net net0 = decl_.defs.front().build(p);
  const Node& in = net0.nodes().front();
  x_ = Tensor<T>("conv_x", net0.batch(), in.c, in.h, in.w);
  hx_ = fill_values<T>(static_cast<int64_t>(x_.size()), 12345, 1.0);
  Kokkos::deep_copy(
      x_, Kokkos::View<const T****, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
              hx_.data(), x_.extent(0), x_.extent(1), x_.extent(2), x_.extent(3)));
  for (auto& v : available_variants()) {
    const VariantDef& d = def(v);
    exec_[v] = std::make_unique<NetExec<T>>(d.build(p), d.be, seed_of(d.structure));
    exec_[v]->bind(x_);
  }
}

template <class T>
void ConvTechnique<T>::run(const std::string& variant) {
  exec_.at(variant)->run();
}

// Two comparisons, each timed by the service in turn, call by call, inside
// one variant's case, so a ratio depends neither on which variant ran first
// nor on a shared machine's speed drifting between two separate loops; each
// timed call follows one of its own, not straight after the other's.
//  - The main variant against the vendor baseline (the throughput verdict).
//  - The replaced structure (defs[1]) against the block (defs[0]), in
//    defs[1]'s case: fastest calls, what each structure can reach.
template <class T>
std::vector<Probe> ConvTechnique<T>::probes(const std::string& variant) const {
  std::vector<Probe> out = paired_with_baseline(variant);  // setup() built every available variant
  if (decl_.ratio.params_ratio && decl_.defs.size() >= 2 && variant == decl_.defs[1].name &&
      exec_.count(decl_.defs[0].name)) {
    Probe p{kTimeRatio, {decl_.defs[0].name, variant}};
    p.samples = 5;
    p.settle = 1;
    p.stat = Probe::Stat::min;
    out.push_back(p);
  }
  return out;
}

template <class T>
CheckResult ConvTechnique<T>::check(const std::string& variant) {
  NetExec<T>& ex = *exec_.at(variant);
  ex.sync_output();
  const std::string& st = def(variant).structure;
  if (!ref_.count(st)) ref_[st] = net_reference<T>(ex, hx_, unit_roundoff<T>());
  const auto& ref = ref_[st];
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ex.output());
  Comparator cmp("gamma_L*sum|w|(|x|+e_in)+sum|w|e_in per layer, L=C_in/g*kh*kw(+1 bias) (Higham 3.5)");
  const T* got = h.data();
  for (size_t i = 0; i < ref.v.size(); ++i) cmp.add(got[i], static_cast<double>(ref.v[i]), ref.err[i]);
  CheckResult r = cmp.result();
  if (decl_.ratio.params_ratio) r.merge(check_definition(variant));
  r.note = ex.net().describe();
  if (is_onednn(def(variant).be)) r.note += "; oneDNN " + ex.onednn_impl();
  if (def(variant).be == Backend::cudnn) r.note += "; cuDNN " + ex.cudnn_impl();
  return r;
}

// A composite block's output against the reference written from the block's
// definition (reference/conv/block_ref.hpp), not from its declared graph.
template <class T>
CheckResult ConvTechnique<T>::check_definition(const std::string& variant) {
  const NetExec<T>& ex = *exec_.at(variant);
  const std::string key = "definition/" + def(variant).structure;
  if (!ref_.count(key)) {
    const Net& net = ex.net();
    std::vector<reference::LayerWeights<T>> weights;
    for (size_t i = 0; i < net.nodes().size(); ++i)
      if (net.nodes()[i].op == Op::conv) weights.push_back({&ex.host_weights(i), &ex.host_bias(i)});
    const Node& in = net.nodes().front();
    reference::RefTensor x;
    x.resize(net.batch(), in.c, in.h, in.w);
    for (size_t i = 0; i < hx_.size(); ++i) x.v[i] = hx_[i];
    ref_[key] =
        reference::block_reference<T>(info_.name, def(variant).structure, params_, x, weights, unit_roundoff<T>());
  }
  const auto& ref = ref_[key];
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ex.output());
  Comparator cmp("vs the block's definition (block_ref.hpp)");
  if (static_cast<size_t>(h.size()) != ref.v.size()) {
    cmp.add(NAN, 0, 0);  // a different output shape than the definition's: wrong
    return cmp.result();
  }
  for (size_t i = 0; i < ref.v.size(); ++i) cmp.add(h.data()[i], static_cast<double>(ref.v[i]), ref.err[i]);
  return cmp.result();
}

template <class T>
void ConvTechnique<T>::report_counters(const std::string& variant, std::map<std::string, double>& out) {
  const NetExec<T>& ex = *exec_.at(variant);
  out["params"] = static_cast<double>(ex.params_allocated());
  out["conv_flops"] = 2 * ex.net().conv_macs();
  out["rf_h"] = ex.net().out().rf_h;
  out["rf_w"] = ex.net().out().rf_w;
  // Every variant's allocated parameters (all are built at setup), so that
  // a variant's verdicts can compare the two structures of a block.
  for (auto& [v, e] : exec_) out["params." + v] = static_cast<double>(e->params_allocated());
#ifdef _OPENMP
  // oneDNN's OpenMP runtime uses omp_get_max_threads(), which Kokkos set at
  // initialize: recorded so a result shows both ran on the same threads.
  if (is_onednn(def(variant).be)) out["vendor_threads"] = omp_get_max_threads();
#endif
}

template <class T>
void ConvTechnique<T>::teardown() {
  exec_.clear();
  ref_.clear();
  x_ = {};
  hx_.clear();
}

template <class T>
void ConvTechnique<T>::predict(const Params& p, const std::string& variant, const Measurement& m,
                               const Machine& machine, std::vector<Verdict>& out) const {
  const VariantDef& d = def(variant);
  const Net net = d.build(p);
  const bool first = variant == info_.main_variant();
  // Roofline position with this variant's own counts.
  const Counts c = counts_of(net);
  if (auto v = roofline_verdict(info_, variant, p, c, m, machine, first)) {
    // judge() runs in the process that measured, so this is the choice that ran.
    if (is_onednn(d.be)) v->note += "; oneDNN " + onednn_choice(net, d.be);
    out.push_back(*v);
  }
  if (is_onednn(d.be) || d.be == Backend::cudnn)
    return;  // the structure's predictions are judged once, on the project's variant
  const Prediction pr = d.predict(p);
  const auto cnt = [&](const char* k) { return m.counters.count(k) ? m.counters.at(k) : -1.0; };
  if (pr.params >= 0)
    out.push_back(exact_verdict(info_.name, variant, p, "parameters", "", pr.params, cnt("params"),
                                "allocated weights+biases vs closed form (" + info_.source + ")"));
  if (pr.macs >= 0)
    out.push_back(exact_verdict(info_.name, variant, p, "conv FLOPs", "FLOP", 2 * pr.macs, cnt("conv_flops"),
                                "2 x MACs of the built layers vs closed form"));
  if (pr.rf > 0) {
    Verdict v = exact_verdict(info_.name, variant, p, "receptive field", "px", pr.rf, cnt("rf_h"),
                              "composed layer by layer vs 1 + n(k-1); cols " + std::to_string(int(cnt("rf_w"))));
    if (cnt("rf_w") != pr.rf) v.status = sp::Status::fail;
    out.push_back(v);
  }
  // The replaced structure (defs[1]) against the block (defs[0]).
  if (!decl_.ratio.params_ratio || decl_.defs.size() < 2 || variant != decl_.defs[1].name) return;
  const std::string& a = decl_.defs[0].name;
  const auto pa = m.counters.find("params." + a), pb = m.counters.find("params." + variant);
  if (pa != m.counters.end() && pb != m.counters.end() && pa->second > 0) {
    Verdict v = row(info_.name, variant, p, "parameter ratio " + variant + "/" + a, "x", decl_.ratio.params_ratio(p),
                    pb->second / pa->second);
    v.band_lo = 1 - info_.tol.prediction_rel, v.band_hi = 1 + info_.tol.prediction_rel;
    v.judge();
    v.note = "counted ratio vs " + decl_.ratio.formula;
    out.push_back(v);
  }
  const auto tr = m.counters.find(kTimeRatio);
  if (tr != m.counters.end() && tr->second > 0) {
    const Net na = decl_.defs[0].build(p);
    const double fa = counts_of(na).flops, fb = c.flops;
    Verdict v = row(info_.name, variant, p, "time ratio " + variant + "/" + a, "x", fb / fa, tr->second);
    v.status = sp::Status::info;  // the FLOP ratio is what the structure saves; the time ratio is what a machine gives
    v.band_lo = 0, v.band_hi = INFINITY;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "FLOP ratio %.3g, time ratio %.3g (fastest calls, timed in turn); %s AI %.3g vs %s AI %.3g", fb / fa,
                  tr->second, a.c_str(), counts_of(na).intensity(), variant.c_str(), c.intensity());
    v.note = buf;
    out.push_back(v);
  }
}

template class ConvTechnique<float>;
template class ConvTechnique<double>;

}  // namespace sp::conv
