#include "scaleproof/technique.hpp"

#include "scaleproof/host.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sp {

void CheckResult::merge(const CheckResult& o) {
  checked += o.checked;
  wrong += o.wrong;
  max_abs_err = std::max(max_abs_err, o.max_abs_err);
  max_rel_err = std::max(max_rel_err, o.max_rel_err);
  max_bound = std::max(max_bound, o.max_bound);
  if (bound_rule.empty()) bound_rule = o.bound_rule;
  if (!o.note.empty()) note += (note.empty() ? "" : "; ") + o.note;
}

bool RankRule::accepts(int n) const {
  if (n < min || n > max) return false;
  if (power_of_two && (n & (n - 1)) != 0) return false;
  return true;
}

std::string RankRule::describe() const {
  std::string s;
  if (max == min)
    s = std::to_string(min);
  else if (max >= (1 << 30))
    s = ">= " + std::to_string(min);
  else
    s = std::to_string(min) + ".." + std::to_string(max);
  if (power_of_two) s += ", power of two";
  return s;
}

double Machine::peak_for(const std::string& dtype) const {
  auto it = peak.find(dtype);
  if (it != peak.end()) return it->second;
  // Narrower types without their own probe run at least at fp32's rate on CPUs.
  if (dtype != "fp64") {
    auto f32 = peak.find("fp32");
    if (f32 != peak.end()) return f32->second;
  }
  return 0;
}

const char* to_string(VariantKind k) {
  switch (k) {
    case VariantKind::kernel: return "kernel";
    case VariantKind::vendor: return "vendor";
    case VariantKind::algorithm: return "algorithm";
    case VariantKind::strategy: return "strategy";
  }
  return "?";
}

bool Variant::runs_in_this_build() const {
  constexpr bool host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible;
  return needs == MemoryNeed::any || (needs == MemoryNeed::host) == host;
}

const Variant* Info::variant(const std::string& n) const {
  for (auto& v : variants)
    if (v.name == n) return &v;
  return nullptr;
}

void check_declaration(const Info& info) {
  if (info.variants.empty()) throw std::logic_error("technique without variants: " + info.name);
  if (info.variants.front().kind == VariantKind::vendor)
    throw std::logic_error(info.name + ": variants[0] must be the project's own, not a vendor library");
  for (auto& v : info.variants) {
    if ((v.kind == VariantKind::vendor) == v.library.empty())
      throw std::logic_error(info.name + ": variant " + v.name + " names a library iff it is a vendor variant");
    for (auto& w : info.variants)
      if (&w != &v && w.name == v.name) throw std::logic_error(info.name + ": variant " + v.name + " declared twice");
  }
  if (!info.baseline.empty() && !info.variant(info.baseline))
    throw std::logic_error(info.name + ": baseline " + info.baseline + " is not a declared variant");
  for (auto& a : info.baseline_alternatives) {
    const Variant* v = info.variant(a);
    const Variant* b = info.baseline.empty() ? nullptr : info.variant(info.baseline);
    if (!v || !b || v->kind != VariantKind::vendor || v->library != b->library)
      throw std::logic_error(info.name + ": baseline alternative " + a + " is not a variant of the baseline's library");
  }
}

std::vector<std::string> Info::variant_names() const {
  std::vector<std::string> out;
  for (auto& v : variants) out.push_back(v.name);
  return out;
}

std::vector<std::string> Technique::available_variants() const {
  std::vector<std::string> out;
  for (auto& v : info_.variants)
    if (v.runs_in_this_build()) out.push_back(v.name);
  return out;
}

std::vector<Probe> Technique::paired_with_baseline(const std::string& variant) const {
  if (info_.baseline.empty() || variant != info_.main_variant()) return {};
  const auto avail = available_variants();
  if (std::find(avail.begin(), avail.end(), info_.baseline) == avail.end()) return {};
  Probe p{kPairedVsBaseline, {variant, info_.baseline}};
  for (auto& a : info_.baseline_alternatives)
    if (std::find(avail.begin(), avail.end(), a) != avail.end()) p.calls.push_back(a);
  p.samples = 9;
  p.settle = 1;
  return {p};
}

std::string Technique::why_unavailable(const std::string& variant, int /*nranks*/) const {
  for (const auto& v : available_variants())
    if (v == variant) return {};
  const Variant* d = info_.variant(variant);
  if (!d) return info_.name + " has no variant '" + variant + "'";
  if (!d->runs_in_this_build())
    return "variant '" + variant + "' of " + info_.name +
           (d->needs == MemoryNeed::host ? " needs host-accessible memory (a build without CUDA)"
                                         : " needs device memory (a CUDA build)");
  return "variant '" + variant + "' is not available in this build";
}

void Technique::validate(const Params& p, int nranks) const {
  check_params(info_, p);
  if (!info_.ranks.accepts(nranks))
    throw InputError(info_.name + " cannot use " + std::to_string(nranks) + " rank(s) (needs " +
                     info_.ranks.describe() + ")");
}

std::optional<Verdict> roofline_verdict(const Info& info, const std::string& variant, const Params& p, const Counts& c,
                                        const Measurement& m, const Machine& machine, bool judged) {
  const double peak = machine.peak_for(c.dtype);
  if (m.seconds <= 0 || (c.flops <= 0 && c.bytes() <= 0) || machine.bandwidth <= 0) return std::nullopt;
  if (c.flops > 0 && peak <= 0) return std::nullopt;
  // Lower bound on time from each roof; the larger is the binding one.
  const double t_compute = c.flops > 0 ? c.flops / peak : 0;
  const double t_memory = c.bytes() / machine.bandwidth;
  Verdict v{info.name, variant, p.label(), "roofline time", "s"};
  v.predicted = std::max(t_compute, t_memory);
  v.measured = m.seconds;
  v.ratio = v.predicted / m.seconds;
  v.band_lo = info.tol.roof_min;
  v.band_hi = info.tol.roof_max;
  const double llc = reported_last_level_cache_bytes();  // 0: unknown, judged
  const bool resident = t_memory > t_compute && llc > 0 && c.bytes() < 4 * llc;
  v.judge(judged && !resident);
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s-bound, AI %.3g FLOP/B, %.1f%% of roof",
                t_compute >= t_memory ? "compute" : "memory", c.intensity(), 100 * v.ratio);
  v.note = buf;
  if (judged && resident) v.note += "; cache-resident (bytes < 4x LLC): not judged";
  return v;
}

void Technique::predict(const Params& p, const std::string& variant, const Measurement& m, const Machine& machine,
                        std::vector<Verdict>& out) const {
  const bool judged = (variant == info_.main_variant()) && info_.roof_probe.empty();
  if (auto v = roofline_verdict(info_, variant, p, counts(p, m.ranks), m, machine, judged)) out.push_back(*v);
}

Verdict exact_verdict(const std::string& technique, const std::string& variant, const Params& p,
                      const std::string& quantity, const std::string& unit, double predicted, double measured,
                      std::string note) {
  Verdict v{technique, variant, p.label(), quantity, unit};
  v.predicted = predicted;
  v.measured = measured;
  v.ratio = predicted != 0 ? measured / predicted : (measured == 0 ? 1 : INFINITY);
  v.band_lo = v.band_hi = 1;
  v.status = pass_if(measured == predicted);
  v.note = std::move(note);
  return v;
}

const char* to_string(Status s) {
  switch (s) {
    case Status::pass: return "PASS";
    case Status::fail: return "FAIL";
    case Status::info: break;
  }
  return "INFO";
}

Status parse_status(const std::string& word) {
  for (Status s : {Status::pass, Status::fail, Status::info})
    if (word == to_string(s)) return s;
  throw InputError("verdict status '" + word + "' is not PASS, FAIL or INFO");
}

}  // namespace sp
