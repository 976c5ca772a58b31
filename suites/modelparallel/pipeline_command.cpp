// `scaleproof pipeline --schedule S -p P -m M [-v V] --out DIR`: runs one
// pipeline configuration on the first P ranks (its own sub-communicator),
// prints per-rank bubble, peak activations and messages against the
// predictions, and writes the timeline of the last step as JSON plus a chart
// (suites/modelparallel/plots/timeline.py, matplotlib) into DIR.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kernels/comm/transport.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/option_range.hpp"
#include "scaleproof/registry.hpp"
#include "suites/modelparallel/pipeline_run.hpp"

namespace {

struct PipelineOptions {
  std::string schedule = "1f1b", out;
  int p = 1, m = 8, v = 1, layers = 8, hidden = 256, rows = 64, steps = 3;
};
PipelineOptions opt;

// One rank's statistics flattened: busy, step, peak sets, peak elements,
// messages, bytes, then (kind, mb, chunk, t0, t1) per operation.
std::vector<double> flatten(const sp::mp::PipeStats& s, double busy, double step) {
  std::vector<double> v = {
      busy, step, double(s.peak_stash), double(s.peak_stash_elems), double(s.messages_sent), double(s.bytes_sent)};
  for (auto& o : s.timeline)
    v.insert(v.end(), {o.op.kind == sp::mp::Kind::F ? 0.0 : 1.0, double(o.op.mb), double(o.op.chunk), o.t0, o.t1});
  return v;
}

nlohmann::json report(const sp::mp::PipeConfig& c, const std::vector<std::vector<double>>& ranks) {
  nlohmann::json j = {{"schedule", sp::mp::to_string(c.kind)},
                      {"p", c.p},
                      {"m", c.m},
                      {"v", c.v},
                      {"layers", c.layers},
                      {"hidden", c.h},
                      {"rows", c.rows},
                      {"steps", opt.steps},
                      {"predicted_bubble", sp::mp::predicted_bubble(c.kind, c.p, c.m, c.v)}};
  double step = 0;
  for (auto& r : ranks) step = std::max(step, r[1]);
  j["step_s"] = step / opt.steps;
  for (int i = 0; i < static_cast<int>(ranks.size()); ++i) {
    const auto& r = ranks[i];
    nlohmann::json ops = nlohmann::json::array();
    for (size_t k = 6; k + 4 < r.size(); k += 5)
      ops.push_back({{"kind", r[k] == 0 ? "F" : "B"},
                     {"mb", int(r[k + 1])},
                     {"chunk", int(r[k + 2])},
                     {"t0", r[k + 3]},
                     {"t1", r[k + 4]}});
    j["ranks"].push_back({{"rank", i},
                          {"bubble", 1 - r[0] / step},
                          {"peak_stash", int(r[2])},
                          {"predicted_peak_stash", sp::mp::predicted_peak_stash(c.kind, c.p, c.m, c.v, i)},
                          {"peak_stash_elems", r[3]},
                          {"messages_sent", r[4]},
                          {"predicted_messages_sent", sp::mp::predicted_messages_sent(c.p, c.m, c.v, i)},
                          {"bytes_sent", r[5]},
                          {"ops", ops}});
  }
  return j;
}

void print(const nlohmann::json& j) {
  std::printf("pipeline %s p=%d m=%d v=%d L=%d h=%d rows=%d: step %.3f ms (mean of %d), predicted bubble %.4f\n",
              j["schedule"].get<std::string>().c_str(), j["p"].get<int>(), j["m"].get<int>(), j["v"].get<int>(),
              j["layers"].get<int>(), j["hidden"].get<int>(), j["rows"].get<int>(), 1e3 * j["step_s"].get<double>(),
              j["steps"].get<int>(), j["predicted_bubble"].get<double>());
  std::printf("replayed with the measured op durations and instant messages: bubble %.4f (mean over ranks)\n",
              j["replayed_bubble"].get<double>());
  std::printf("%5s %9s %11s %11s %10s %10s\n", "rank", "bubble", "peak_sets", "predicted", "msgs_sent", "predicted");
  for (auto& r : j["ranks"])
    std::printf("%5d %9.4f %11d %11d %10.0f %10lld\n", r["rank"].get<int>(), r["bubble"].get<double>(),
                r["peak_stash"].get<int>(), r["predicted_peak_stash"].get<int>(), r["messages_sent"].get<double>(),
                r["predicted_messages_sent"].get<long long>());
}

int run_pipeline() {
  sp::Params params{{"m", std::to_string(opt.m)},
                    {"v", std::to_string(opt.v)},
                    {"L", std::to_string(opt.layers)},
                    {"h", std::to_string(opt.hidden)},
                    {"b", std::to_string(opt.rows)}};
  const auto c = sp::mp::PipeConfig::from(sp::mp::parse_schedule(opt.schedule), params, opt.p);
  c.validate();
  const int world = sp::comm::size();
  if (opt.p > world)
    throw sp::InputError("pipeline: p = " + std::to_string(opt.p) + " stages need " + std::to_string(opt.p) +
                         " ranks, only " + std::to_string(world) + " available");
  std::unique_ptr<sp::comm::Transport> t;
#ifdef SP_HAVE_MPI
  MPI_Comm sub = MPI_COMM_NULL;
  const int me = sp::comm::rank();
  MPI_Comm_split(sp::comm::world(), me < opt.p ? 0 : MPI_UNDEFINED, me, &sub);
  if (sub == MPI_COMM_NULL) return 0;  // not a stage of this pipeline
  t = std::make_unique<sp::comm::MpiTransport>(sub);
#else
  t = std::make_unique<sp::comm::SelfTransport>();
#endif
  sp::mp::PipeRun run;
  run.setup(*t, c);
  sp::mp::barrier(*t);
  run.step();  // warm-up
  double busy = 0, step = 0;
  for (int s = 0; s < opt.steps; ++s) {
    sp::mp::barrier(*t);
    const auto st = run.step();
    busy += st.busy, step += st.step;
  }
  auto all = sp::mp::gather_to_root(*t, flatten(run.last, busy, step));
  const double replay = sp::mp::replay_bubble(*t, run);
#ifdef SP_HAVE_MPI
  t.reset();
  MPI_Comm_free(&sub);
#endif
  if (all.empty()) return 0;
  auto j = report(c, all);
  j["replayed_bubble"] = replay;  // last step's op durations, instant messages (schedule_check.hpp)
  print(j);
  std::filesystem::create_directories(opt.out);
  const std::string stem = opt.out + "/pipeline_" + opt.schedule + "_p" + std::to_string(c.p) + "_m" +
                           std::to_string(c.m) + "_v" + std::to_string(c.v);
  std::ofstream(stem + ".json") << j.dump(1) << "\n";
  const std::string cmd = std::string("/usr/bin/python3 ") + SP_MP_PLOT_SCRIPT + " " + stem + ".json " + stem + ".png";
  if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "warning: timeline chart not drawn (%s)\n", cmd.c_str());
  std::printf("timeline: %s.json, %s.png\n", stem.c_str(), stem.c_str());
  return 0;
}

sp::Registry::Command add_pipeline(CLI::App& app) {
  auto* sub = app.add_subcommand("pipeline", "Run one pipeline schedule, write its timeline (JSON + PNG)");
  sub->add_option("--schedule", opt.schedule, "gpipe, 1f1b or interleaved")->capture_default_str();
  using sp::cli::range;
  range(sub->add_option("-p", opt.p, "Pipeline stages (ranks)"), 1, 1 << 20)->capture_default_str();
  range(sub->add_option("-m", opt.m, "Micro-batches per step"), 1, 1 << 20)->capture_default_str();
  range(sub->add_option("-v", opt.v, "Model chunks per rank (interleaved)"), 1, 1 << 20)->capture_default_str();
  range(sub->add_option("-L,--layers", opt.layers, "Layers of the model"), 1, 1 << 20)->capture_default_str();
  range(sub->add_option("--hidden", opt.hidden, "Hidden size h (layers are h x h)"), 1, 1 << 20)->capture_default_str();
  range(sub->add_option("--rows", opt.rows, "Rows (tokens) per micro-batch"), 1, 1 << 20)->capture_default_str();
  range(sub->add_option("--steps", opt.steps, "Measured steps (after one warm-up)"), 1, 1e6)->capture_default_str();
  sub->add_option("--out,-o", opt.out, "Folder for the timeline files")->required();
  return {sub, run_pipeline, true};
}

SP_REGISTER_COMMAND(add_pipeline);

}  // namespace
