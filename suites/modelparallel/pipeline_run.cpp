// Pipeline set-up, step and check; see pipeline_run.hpp.
#include "suites/modelparallel/pipeline_run.hpp"

#include <cmath>

#include "reference/modelparallel/pipeline_ref.hpp"
#include "reference/modelparallel/schedule_check.hpp"
#include "reference/modelparallel/stash_ref.hpp"
#include "scaleproof/compare.hpp"
#include "suites/modelparallel/mp_data.hpp"

namespace sp::mp {

PipeConfig PipeConfig::from(ScheduleKind k, const Params& params, int p) {
  PipeConfig c;
  c.kind = k;
  c.p = p;
  c.m = static_cast<int>(params.i("m"));
  c.v = static_cast<int>(params.i_or("v", 1));
  c.layers = static_cast<int>(params.i("L"));
  c.h = static_cast<int>(params.i("h"));
  c.rows = static_cast<int>(params.i("b"));
  return c;
}

void PipeConfig::validate() const {
  check_shape(kind, p, m, v, layers);
  if (h < 1 || rows < 1) throw InputError("pipeline: hidden size and rows must be >= 1");
  if (!pipeline_tags_fit(m, p * v)) throw InputError("pipeline: m * p * v too large for MPI tags (2 m p v < 32767)");
  if (static_cast<int64_t>(rows) * h > (int64_t(1) << 26) || static_cast<int64_t>(h) * h > (int64_t(1) << 26))
    throw InputError("pipeline: activations or weights above 2^26 elements are not supported");
}

Mat pipe_weight(int layer, int h) {
  // 1.7/sqrt(h) keeps activations O(1) through many GeLU layers.
  return to_view(fill(static_cast<size_t>(h) * h, 1000 + layer, 1.7 / std::sqrt(h)), h, h, "W");
}
std::vector<double> pipe_input(int mb, const PipeConfig& c) { return fill(c.act_elems(), 2000 + mb, 1.0); }
std::vector<double> pipe_out_grad(int mb, const PipeConfig& c) { return fill(c.act_elems(), 3000 + mb, 1.0); }

void PipeRun::setup(comm::Transport& t, const PipeConfig& c) {
  cfg = c;
  ex = std::make_unique<PipelineExecutor>(t, make_schedule(c.kind, c.p, c.m, c.v), c.layers, c.h, c.rows);
  ex->init_weights([&](int l) { return pipe_weight(l, c.h); });
  inputs.clear(), out_grads.clear();
  const bool first = t.rank() == 0, last = t.rank() == (c.p * c.v - 1) % c.p;
  for (int mb = 0; mb < c.m; ++mb) {
    inputs.push_back(first ? to_view(pipe_input(mb, c), c.rows, c.h, "X") : Mat());
    out_grads.push_back(last ? to_view(pipe_out_grad(mb, c), c.rows, c.h, "G") : Mat());
  }
}

PipeStats PipeRun::step() {
  last = ex->step(inputs, out_grads);
  return last;
}

void barrier(comm::Transport& t) {
#ifdef SP_HAVE_MPI
  if (auto* mpi = dynamic_cast<comm::MpiTransport*>(&t)) MPI_Barrier(mpi->comm());
#else
  (void)t;
#endif
}

std::vector<std::vector<double>> gather_to_root(comm::Transport& t, const std::vector<double>& mine) {
  std::vector<std::vector<double>> all;
#ifdef SP_HAVE_MPI
  if (auto* mpi = dynamic_cast<comm::MpiTransport*>(&t)) {
    int n = static_cast<int>(mine.size());
    std::vector<int> counts(t.size()), displs(t.size());
    MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, mpi->comm());
    int total = 0;
    for (int i = 0; i < t.size(); ++i) displs[i] = total, total += counts[i];
    std::vector<double> buf(t.rank() == 0 ? total : 0);
    MPI_Gatherv(mine.data(), n, MPI_DOUBLE, buf.data(), counts.data(), displs.data(), MPI_DOUBLE, 0, mpi->comm());
    if (t.rank() == 0)
      for (int i = 0; i < t.size(); ++i) all.emplace_back(buf.begin() + displs[i], buf.begin() + displs[i] + counts[i]);
    return all;
  }
#endif
  all.push_back(mine);
  return all;
}

double replay_bubble(comm::Transport& t, const PipeRun& run) {
  std::vector<double> durations;
  for (auto& o : run.last.timeline) durations.push_back(o.t1 - o.t0);
  const auto all = gather_to_root(t, durations);
  if (all.empty()) return 0;
  const auto& c = run.cfg;
  const auto sim = reference::simulate_schedule(make_schedule(c.kind, c.p, c.m, c.v).ranks, c.p, c.m, c.v,
                                                [&](int i, size_t k) { return all[i][k]; });
  double mean = 0;
  for (int i = 0; i < c.p; ++i) mean += sim.bubble(i) / c.p;
  return mean;
}

namespace {

// The same layer kernels, one micro-batch after another on one rank: the
// pipeline may reorder independent work but never changes an operation, so
// its results must be bitwise equal to these.
struct Sequential {
  std::vector<Mat> Y, dX;
  std::vector<PipeLayer> layers;
};

Sequential run_sequential(const PipeConfig& c) {
  Sequential s;
  for (int l = 0; l < c.layers; ++l) {
    s.layers.push_back({pipe_weight(l, c.h), Mat("dW", c.h, c.h)});
  }
  for (int mb = 0; mb < c.m; ++mb) {
    std::vector<LayerStash> st(c.layers);
    Mat x = to_view(pipe_input(mb, c), c.rows, c.h, "X");
    for (int l = 0; l < c.layers; ++l) x = layer_forward(s.layers[l], x, st[l]);
    s.Y.push_back(x);
    Mat dy = to_view(pipe_out_grad(mb, c), c.rows, c.h, "G");
    for (int l = c.layers - 1; l >= 0; --l) dy = layer_backward(s.layers[l], st[l], dy);
    s.dX.push_back(dy);
  }
  return s;
}

void exactly(Comparator& cmp, CMat got, CMat want) {
  auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got);
  auto w = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), want);
  for (size_t i = 0; i < g.extent(0); ++i)
    for (size_t j = 0; j < g.extent(1); ++j) cmp.add(g(i, j), w(i, j), 0.0);
}

}  // namespace

CheckResult pipe_check(PipeRun& run, int rank) {
  const PipeConfig& c = run.cfg;
  const bool first = rank == 0, last = rank == (c.p * c.v - 1) % c.p;
  auto mine = run.ex->layers();

  const Sequential seq = run_sequential(c);
  Comparator same("bitwise vs the same kernels run sequentially (bound 0)");
  for (int mb = 0; mb < c.m; ++mb) {
    if (last) exactly(same, run.ex->outputs()[mb], seq.Y[mb]);
    if (first) exactly(same, run.ex->input_grads()[mb], seq.dX[mb]);
  }
  for (auto& [l, layer] : mine) exactly(same, layer->dW, seq.layers[l].dW);

  using reference::EbMat;
  std::vector<EbMat> W, X, G;
  for (int l = 0; l < c.layers; ++l) {
    auto w = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), seq.layers[l].W);
    W.push_back(reference::exact(std::vector<double>(w.data(), w.data() + w.size()), c.h, c.h));
  }
  for (int mb = 0; mb < c.m; ++mb) {
    X.push_back(reference::exact(pipe_input(mb, c), c.rows, c.h));
    G.push_back(reference::exact(pipe_out_grad(mb, c), c.rows, c.h));
  }
  const auto ref = reference::pipeline_reference(W, X, G);
  Comparator bounded("running error bound vs plain-loop reference (bounded.hpp)");
  for (int mb = 0; mb < c.m; ++mb) {
    if (last) compare(bounded, run.ex->outputs()[mb], ref.Y[mb]);
    if (first) compare(bounded, run.ex->input_grads()[mb], ref.dX[mb]);
  }
  for (auto& [l, layer] : mine) compare(bounded, layer->dW, ref.dW[l]);

  // The step's counts are exact predictions: checked at every rank count the conformance suites run.
  Comparator counts("counts");
  const auto& st = run.last;
  // The peak from the schedule's definition (stash_ref.hpp), not from the generator's warm-up.
  const auto schedule = c.kind == ScheduleKind::gpipe         ? reference::PipeSchedule::gpipe
                        : c.kind == ScheduleKind::one_f_one_b ? reference::PipeSchedule::one_f_one_b
                                                              : reference::PipeSchedule::interleaved;
  counts.add(st.peak_stash, reference::peak_stash_sets(schedule, c.p, c.m, c.v, rank), 0);
  const double msgs = static_cast<double>(predicted_messages_sent(c.p, c.m, c.v, rank));
  counts.add(static_cast<double>(st.messages_sent), msgs, 0);
  counts.add(static_cast<double>(st.bytes_sent), msgs * 8.0 * c.act_elems(), 0);

  CheckResult r = same.result();
  r.bound_rule = "bitwise vs sequential same kernels; running error bound vs plain loops; exact counts";
  r.merge(bounded.result());
  r.merge(counts.result());
  return r;
}

}  // namespace sp::mp
