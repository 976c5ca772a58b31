// `scaleproof db import FOLDER...`: loads existing results folders (and
// nccl-tests JSON files) into the results database, in one transaction.
// A folder that is not itself a results folder is searched for the results
// folders below it. Each path is recorded once: importing it again is a no-op.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "db/record.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/registry.hpp"

namespace sp {

namespace {

struct DbArgs {
  db::Options db;
  std::vector<std::string> folders;
};

int run_import(const DbArgs& a) {
  if (comm::size() > 1) throw InputError("run `scaleproof db` as one process");
  if (!a.db.enabled()) throw InputError("--db none: import needs a database");
  std::vector<std::string> items;
  for (auto& f : a.folders) {
    const auto found = db::find_recordable(f);
    if (found.empty()) throw InputError(f + " holds no results (no results folder or nccl-tests JSON in it)");
    items.insert(items.end(), found.begin(), found.end());
  }
  db::Database d(a.db.under("results"), true);
  const auto recorded = db::record(d, items);
  db::Recorded total;
  int already = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& r = recorded[i];
    if (r.already) {
      ++already;
      std::printf("run %lld: %s (already recorded)\n", static_cast<long long>(r.run_id), items[i].c_str());
      continue;
    }
    std::printf("run %lld: %s (%s: %d cases, %d measurements, %d checks, %d verdicts)\n", static_cast<long long>(r.run_id), items[i].c_str(),
                r.kind.c_str(), r.cases, r.measurements, r.checks, r.verdicts);
    total.cases += r.cases, total.measurements += r.measurements, total.stats += r.stats;
    total.checks += r.checks, total.verdicts += r.verdicts;
  }
  std::printf("%s: %zu run(s) imported (%d cases, %d measurements, %d statistics, %d checks, %d verdicts), %d already there\n",
              d.path().c_str(), items.size() - already, total.cases, total.measurements, total.stats, total.checks,
              total.verdicts, already);
  return 0;
}

Registry::Command hook(CLI::App& app) {
  auto a = std::make_shared<DbArgs>();
  auto* c = app.add_subcommand("db", "The results database: import existing results folders");
  c->require_subcommand(1);
  auto* imp = c->add_subcommand("import", "Record results folders (and the results folders below a folder) in the database");
  imp->add_option("folders", a->folders, "Results folders, folders holding results folders, or nccl-tests JSON files")->required();
  db::add_options(imp, a->db);
  return {c, [a] { return run_import(*a); }};
}

SP_REGISTER_COMMAND(hook);

}  // namespace

}  // namespace sp
