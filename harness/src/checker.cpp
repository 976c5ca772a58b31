#include "checker.hpp"

#include <Kokkos_Core.hpp>
#include <cstdio>

#include "heartbeat.hpp"
#include "progress.hpp"
#include "scaleproof/comm.hpp"

namespace sp {

CheckRow check_one(const Registered& r, const Params& p, const std::string& variant) {
  CheckRow row{r.info.family, r.info.name, variant, p.label(), {}, {}};
  heartbeat::start();
  try {
    auto t = r.make();
    heartbeat::Call hb(r.info.name, "check");
    t->setup(p, comm::size());
    t->run(variant);
    Kokkos::fence();
    row.result = t->check(variant);
    t->teardown();
  } catch (const std::exception& e) {
    row.error = e.what();
  }
  // Every rank checked its own part: the case passes only if all did.
  CheckResult& c = row.result;
  c.checked = comm::sum(static_cast<long long>(c.checked));
  c.wrong = comm::sum(static_cast<long long>(c.wrong));
  c.max_abs_err = comm::max(c.max_abs_err);
  c.max_rel_err = comm::max(c.max_rel_err);
  c.max_bound = comm::max(c.max_bound);
  if (!comm::all(row.error.empty()) && row.error.empty()) row.error = "failed on another rank";
  return row;
}

std::vector<CheckRow> check_cases(const std::vector<Case>& cases, bool progress) {
  std::vector<CheckRow> rows;
  size_t total = 0;
  for (auto& c : cases) total += c.variants.size();
  Progress bar("check", total);
  for (auto& c : cases)
    for (auto& v : c.variants) {
      rows.push_back(check_one(*c.tech, c.params, v));
      if (progress)
        bar.done(rows.size(), c.tech->info.name + " " + v + " " + c.params.label() + " " +
                                  (rows.back().passed() ? "PASSED" : "FAILED"));
    }
  return rows;
}

nlohmann::json to_json(const std::vector<CheckRow>& rows) {
  nlohmann::json a = nlohmann::json::array();
  for (auto& r : rows) {
    a.push_back({{"family", r.family},
                 {"technique", r.technique},
                 {"variant", r.variant},
                 {"params", r.params},
                 {"ranks", comm::size()},
                 {"passed", r.passed()},
                 {"checked", r.result.checked},
                 {"wrong", r.result.wrong},
                 {"max_abs_err", r.result.max_abs_err},
                 {"max_rel_err", r.result.max_rel_err},
                 {"max_bound", r.result.max_bound},
                 {"bound_rule", r.result.bound_rule},
                 {"note", r.result.note},
                 {"error", r.error}});
  }
  return a;
}

std::string check_table(const std::vector<CheckRow>& rows) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-24s %-10s %-36s %-7s %10s %10s %10s %8s  %s\n", "technique", "variant", "params",
                "result", "max_abs", "max_rel", "bound", "#wrong", "bound rule");
  out += buf;
  int failed = 0;
  for (auto& r : rows) {
    std::snprintf(buf, sizeof buf, "%-24s %-10s %-36s %-7s %10.3g %10.3g %10.3g %8lld  %s\n", r.technique.c_str(),
                  r.variant.c_str(), r.params.c_str(), r.passed() ? "PASSED" : "FAILED", r.result.max_abs_err,
                  r.result.max_rel_err, r.result.max_bound, static_cast<long long>(r.result.wrong),
                  r.error.empty() ? r.result.bound_rule.c_str() : ("error: " + r.error).c_str());
    out += buf;
    failed += !r.passed();
  }
  std::snprintf(buf, sizeof buf, "%zu passed, %d failed\n", rows.size() - failed, failed);
  out += buf;
  return out;
}

}  // namespace sp
