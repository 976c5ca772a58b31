// `scaleproof db import FOLDER...`: loads existing results folders (and
// nccl-tests JSON files) into the results database, in one transaction.
// A folder that is not itself a results folder is searched for the results
// folders below it; one with none (a folder of notes or logs) is skipped with
// a note, and only an import that finds nothing at all is an input error.
// Each path is recorded once: importing it again is a no-op.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
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
  std::vector<std::string> items, empty;
  for (auto& f : a.folders) {
    std::error_code ec;
    if (!std::filesystem::exists(f, ec)) throw InputError("no results folder at " + f);
    const auto found = db::find_recordable(f);
    if (found.empty()) empty.push_back(f);
    items.insert(items.end(), found.begin(), found.end());
  }
  if (items.empty())
    throw InputError(
        (a.folders.size() == 1 ? a.folders[0] + " holds no results" : "none of the folders holds results") +
        std::string(" (no results folder or nccl-tests JSON in it)"));
  db::Database d(a.db.under("results"), true);
  for (auto& f : empty) std::printf("note: %s holds no results; skipped\n", f.c_str());
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
    std::printf("run %lld: %s (%s: %d cases, %d measurements, %d checks, %d verdicts)\n",
                static_cast<long long>(r.run_id), items[i].c_str(), r.kind.c_str(), r.cases, r.measurements, r.checks,
                r.verdicts);
    total.cases += r.cases, total.measurements += r.measurements, total.stats += r.stats;
    total.checks += r.checks, total.verdicts += r.verdicts;
  }
  std::printf(
      "%s: %zu run(s) imported (%d cases, %d measurements, %d statistics, %d checks, %d verdicts), %d already "
      "there, %zu folder(s) without results\n",
      d.path().c_str(), items.size() - already, total.cases, total.measurements, total.stats, total.checks,
      total.verdicts, already, empty.size());
  return 0;
}

Registry::Command hook(CLI::App& app) {
  auto a = std::make_shared<DbArgs>();
  auto* c = app.add_subcommand("db", "The results database: import existing results folders");
  c->require_subcommand(1);
  auto* imp =
      c->add_subcommand("import", "Record results folders (and the results folders below a folder) in the database");
  imp->add_option("folders", a->folders, "Results folders, folders holding results folders, or nccl-tests JSON files")
      ->required();
  db::add_options(imp, a->db);
  return {c, [a] { return run_import(*a); }};
}

SP_REGISTER_COMMAND(hook);

}  // namespace

}  // namespace sp
