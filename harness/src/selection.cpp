#include "selection.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "manifest.hpp"

namespace sp {

static bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// A case whose bytes exceed this rank's share of the node's memory would
// swap or be killed mid-run: refused before anything starts.
static void check_memory(const std::string& name, const Counts& c, const Params& p) {
  const double need = c.footprint > 0 ? c.footprint : c.bytes();
  const double have = physical_memory_bytes() / std::max(1, local_ranks());
  if (!(need <= have)) {
    char buf[160];
    std::snprintf(buf, sizeof buf, " needs %.3g GB per rank, above the %.3g GB of memory per rank here", need / 1e9,
                  have / 1e9);
    throw InputError(name + " " + p.label() + buf);
  }
}

std::vector<const Registered*> matching(const Filter& f) {
  auto& reg = Registry::get();
  auto families = reg.families();
  for (auto& fam : f.families)
    if (!contains(families, fam)) throw InputError("unknown family '" + fam + "' (see `scaleproof list`)");
  for (auto& t : f.techniques)
    if (!reg.find(t)) throw InputError("unknown technique '" + t + "' (see `scaleproof list`)");
  // A technique named outside the named families contradicts them.
  if (!f.families.empty())
    for (auto& t : f.techniques)
      if (!contains(f.families, reg.find(t)->info.family))
        throw InputError("--technique " + t + " is in family " + reg.find(t)->info.family +
                         ", not in the --family given");
  std::vector<const Registered*> out;
  for (auto& r : reg.all()) {
    const bool named = contains(f.techniques, r.info.name);
    if (!f.techniques.empty() && !named) continue;
    if (!f.families.empty() && !contains(f.families, r.info.family) && !named) continue;
    if (r.info.test_only && !named) continue;
    if (f.scope == RankScope::single_rank && multi_rank(r.info)) continue;
    if (f.scope == RankScope::multi_rank && !multi_rank(r.info)) continue;
    out.push_back(&r);
  }
  return out;
}

std::vector<Case> select_cases(const Filter& f, int nranks, std::vector<std::string>* skipped) {
  Params overrides;
  for (auto& s : f.sets) {
    if (s.empty()) throw InputError("--set: empty value");
    Params one = Params::parse(s);
    for (auto& [k, v] : one.items()) {
      if (overrides.has(k)) throw InputError("--set: parameter " + k + " given twice");
      overrides.set(k, v);
    }
  }

  std::vector<Case> cases;
  std::string unavailable;  // why a variant asked for by name cannot run (first reason)
  for (const Registered* rp : matching(f)) {
    const Registered& r = *rp;
    const bool named = contains(f.techniques, r.info.name);
    for (auto& [k, v] : overrides.items())
      if (r.info.param_sets.front().params.has(k)) check_param_value(r.info, k, v);
    auto proto = r.make();
    auto available = proto->available_variants();
    std::vector<std::string> variants;
    for (auto& v : available)
      if (f.variants.empty() || contains(f.variants, v)) variants.push_back(v);
    for (auto& v : f.variants) {
      const bool declared = r.info.variant(v) != nullptr;
      if (named && !declared) throw InputError("technique " + r.info.name + " has no variant '" + v + "'");
      if (declared && !contains(available, v)) {
        const std::string why = r.info.name + ": " + r.make()->why_unavailable(v, nranks);
        if (named) throw InputError(why);
        if (unavailable.empty()) unavailable = why;
      }
    }
    if (!r.info.ranks.accepts(nranks)) {
      if (named)
        throw InputError(r.info.name + " cannot use " + std::to_string(nranks) + " rank(s) (needs " +
                         r.info.ranks.describe() + ")");
      if (skipped) skipped->push_back(r.info.name);
      continue;
    }
    if (variants.empty()) continue;
    std::vector<std::string> seen;
    bool rank_rejected = false, selected = false;
    for (auto& ps : r.info.param_sets) {
      if (!f.sizes.empty() && std::find(f.sizes.begin(), f.sizes.end(), ps.size) == f.sizes.end()) continue;
      Params p = ps.params;
      for (auto& [k, v] : overrides.items())
        if (p.has(k)) p.set(k, v);
      if (contains(seen, p.label())) continue;
      seen.push_back(p.label());
      check_params(r.info, p);
      // A declared set that cannot run at this rank count (a pipeline with
      // fewer layers than stages x chunks) is left out of a selection that
      // neither names the technique nor overrides a parameter; asked for,
      // it is bad input.
      try {
        proto->validate(p, nranks);
      } catch (const InputError&) {
        if (named || !overrides.items().empty()) throw;
        rank_rejected = true;
        continue;
      }
      check_memory(r.info.name, proto->counts(p, nranks), p);
      cases.push_back({&r, ps.size, p, variants});
      selected = true;
    }
    if (rank_rejected && !selected && skipped) skipped->push_back(r.info.name);
  }
  // Overrides that no selected technique knows are a typo, not a no-op.
  for (auto& [k, v] : overrides.items()) {
    if (f.scope != RankScope::all) break;
    bool used = false;
    for (auto& c : cases) used = used || c.tech->info.param_sets.front().params.has(k);
    if (!used) throw InputError("no selected technique has a parameter '" + k + "'");
  }
  if (cases.empty() && !unavailable.empty()) throw InputError(unavailable);
  if (cases.empty()) throw InputError("nothing selected: no parameter set matches the filters");
  return cases;
}

long long parse_bytes(const std::string& s) {
  if (s.empty()) throw InputError("empty size");
  size_t pos = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &pos);
  } catch (...) {
    throw InputError("bad size '" + s + "'");
  }
  std::string suf = s.substr(pos);
  long long mult = 1;
  if (suf == "K" || suf == "k")
    mult = 1LL << 10;
  else if (suf == "M" || suf == "m")
    mult = 1LL << 20;
  else if (suf == "G" || suf == "g")
    mult = 1LL << 30;
  else if (!suf.empty())
    throw InputError("bad size suffix in '" + s + "' (K, M or G)");
  if (v <= 0) throw InputError("size must be > 0 (got '" + s + "')");
  if (v > (1LL << 62) / mult) throw InputError("size '" + s + "' is above 2^62 bytes");
  return v * mult;
}

}  // namespace sp
