// STREAM copy/scale/add/triad (McCalpin 1995; BabelStream's byte weights):
// the bandwidth roof of the roofline (Williams et al. 2009, docs/roofline.md).
#include "kernels/roofline/stream.hpp"

#include <Kokkos_Core.hpp>
#include <string>

#include "reference/roofline/stream_ref.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/host.hpp"
#include "scaleproof/registry.hpp"

namespace {

using sp::kernels::StreamOp;

using T = double;

const char* op_name(StreamOp op) {
  static const char* n[] = {"copy", "scale", "add", "triad"};
  return n[static_cast<int>(op)];
}

class Stream : public sp::Technique {
 public:
  explicit Stream(StreamOp op) : Technique(describe(op)), op_(op) {}

  static sp::Info describe(StreamOp op) {
    sp::Info i;
    i.name = std::string("stream_") + op_name(op);
    i.family = "roofline";
    i.summary = std::string("STREAM ") + op_name(op) + ", fp64";
    i.param_sets = {{sp::Size::conformance, {{"N", "1000"}}}, {sp::Size::conformance, {{"N", "1"}}},
                    {sp::Size::conformance, {{"N", "4099"}}}, {sp::Size::small, {{"N", "1048576"}}},
                    {sp::Size::medium, {{"N", "33554432"}}},  {sp::Size::large, {{"N", "134217728"}}}};
    i.variants = {sp::Variant::kernel("kokkos")};
    i.roof_probe = op == StreamOp::triad ? "bandwidth" : "";
    // Copy/scale/add are judged against the triad's bandwidth roof; a kernel
    // measuring well above it would mean its byte count is wrong.
    i.tol.roof_min = 0.5;
    i.tol.roof_max = 1.25;
    i.source = "docs/roofline.md Roofline (Williams et al. 2009); BabelStream byte weights";
    return i;
  }

  sp::Counts counts(const sp::Params& p, int) const override {
    const double n = static_cast<double>(p.i("N"));
    sp::Counts c;
    c.flops = sp::kernels::stream_flops(op_) * n;
    c.bytes_read = (sp::kernels::stream_words(op_) - 1) * n * sizeof(T);
    c.bytes_written = n * sizeof(T);
    c.dtype = "fp64";
    return c;
  }

  void setup(const sp::Params& p, int) override {
    const int64_t n = p.i("N");
    a_ = Kokkos::View<T*>("a", n);
    b_ = Kokkos::View<T*>("b", n);
    c_ = Kokkos::View<T*>("c", n);
    // Distinct values per element so an indexing error cannot pass; the
    // initial values are kept on the host for the reference.
    ha_.resize(n), hb_.resize(n), hc_.resize(n);
    for (int64_t i = 0; i < n; ++i) {
      ha_[i] = 0.1 + 0.001 * (i % 97);
      hb_[i] = 0.2 - 0.002 * (i % 89);
      hc_[i] = 0.05 * (i % 13) - 0.3;
    }
    copy_in(a_, ha_), copy_in(b_, hb_), copy_in(c_, hc_);
  }

  void run(const std::string&) override { sp::kernels::stream(op_, a_, b_, c_, q_); }

  // STREAM's rule: each array at least 4x the last-level cache, else the
  // kernel measures cache, not memory, bandwidth; such runs are reported,
  // not judged against the roof.
  void predict(const sp::Params& p, const std::string& variant, const sp::Measurement& m, const sp::Machine& machine,
               std::vector<sp::Verdict>& out) const override {
    const size_t first = out.size();
    Technique::predict(p, variant, m, machine, out);
    const double llc = sp::reported_last_level_cache_bytes();  // 0: unknown, judged
    const double array = static_cast<double>(p.i("N")) * sizeof(T);
    if (llc > 0 && array < 4 * llc)
      for (size_t i = first; i < out.size(); ++i) {
        if (out[i].status == sp::Status::info) continue;  // not judged already (the shared rule's note says why)
        out[i].status = sp::Status::info;
        out[i].note += "; cache-resident (array < 4x LLC): not judged";
      }
  }

  sp::CheckResult check(const std::string&) override {
    const int op = static_cast<int>(op_);
    auto e = sp::reference::stream_ref<T>(op, ha_, hb_, hc_, q_);
    auto out = op == 0 || op == 2 ? c_ : op == 1 ? b_ : a_;
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    // Each rounding step errs by at most u relative to the sum of |terms|
    // (a possible FMA contraction only removes a rounding).
    const double g = sp::gamma_n(e.rounding_steps, sp::unit_roundoff<T>());
    sp::Comparator cmp("gamma_" + std::to_string(e.rounding_steps) + "(fp64)*sum|terms|");
    for (size_t i = 0; i < e.value.size(); ++i)
      cmp.add(h(i), static_cast<double>(e.value[i]), g * static_cast<double>(e.scale[i]));
    return cmp.result();
  }

 private:
  static void copy_in(Kokkos::View<T*> v, const std::vector<T>& h) {
    Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> hv(h.data(), h.size());
    Kokkos::deep_copy(v, hv);
  }
  StreamOp op_;
  T q_ = 0.4;
  Kokkos::View<T*> a_, b_, c_;
  std::vector<T> ha_, hb_, hc_;
};

SP_REGISTER_TECHNIQUE(Stream, StreamOp::copy);
SP_REGISTER_TECHNIQUE(Stream, StreamOp::scale);
SP_REGISTER_TECHNIQUE(Stream, StreamOp::add);
SP_REGISTER_TECHNIQUE(Stream, StreamOp::triad);

}  // namespace
