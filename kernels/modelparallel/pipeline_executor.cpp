// Pipeline executor: see pipeline_executor.hpp.
#include "kernels/modelparallel/pipeline_executor.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>

#include "scaleproof/measure.hpp"

namespace sp::mp {

PipelineExecutor::PipelineExecutor(comm::Transport& t, Schedule s, int layers, int h, int rows)
    : t_(t), sched_(std::move(s)), layers_(layers), h_(h), rows_(rows), rank_(t.rank()) {
  for (int c = rank_; c < sched_.chunks(); c += sched_.p)
    chunks_[c].resize(chunk_layers(layers_, sched_.chunks(), c).count);
}

std::map<int, PipeLayer*> PipelineExecutor::layers() {
  std::map<int, PipeLayer*> out;
  for (auto& [c, ls] : chunks_)
    for (int j = 0; j < static_cast<int>(ls.size()); ++j)
      out[chunk_layers(layers_, sched_.chunks(), c).first + j] = &ls[j];
  return out;
}

size_t PipelineExecutor::param_elems() const {
  size_t n = 0;
  for (auto& [c, ls] : chunks_)
    for (auto& l : ls) n += l.W.size();
  return n;
}

void PipelineExecutor::post_receives() {
  const int C = sched_.chunks();
  for (const Op& op : sched_.ranks[rank_]) {
    // F needs the previous chunk's activation, B the next chunk's gradient.
    const bool needs = op.kind == Kind::F ? op.chunk > 0 : op.chunk < C - 1;
    const int from = owner(op.kind == Kind::F ? op.chunk - 1 : op.chunk + 1);
    if (!needs || from == rank_) continue;
    HostMat buf(Kokkos::view_alloc(std::string("pipe_recv"), Kokkos::WithoutInitializing), rows_, h_);
    t_.set_phase(op.kind == Kind::F ? "pipeline-activation" : "pipeline-gradient");
    const int tg = tag(op.kind, op.mb, op.chunk);
    posted_[tg] = {t_.irecv(buf.data(), buf.size() * sizeof(double), from, tg), buf};
  }
}

Mat PipelineExecutor::receive(Kind k, int mb, int chunk, int from) {
  const int tg = tag(k, mb, chunk);
  if (from == rank_) {
    auto it = local_.find({tg, 0});
    Mat m = it->second;
    local_.erase(it);
    return m;
  }
  auto it = posted_.find(tg);
  t_.wait(it->second.handle);
  Mat m("pipe_recv", rows_, h_);
  Kokkos::deep_copy(m, it->second.buf);
  posted_.erase(it);
  return m;
}

void PipelineExecutor::deliver(Kind k, int mb, int chunk, int to, const Mat& m) {
  const int tg = tag(k, mb, chunk);
  if (to == rank_) {
    local_[{tg, 0}] = m;
    return;
  }
  // The host copy stays alive until the send is complete.
  HostMat buf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m);
  t_.set_phase(k == Kind::F ? "pipeline-activation" : "pipeline-gradient");
  const int h = t_.isend(buf.data(), buf.size() * sizeof(double), to, tg);
  // A large message is sent by rendezvous: it moves only once the sender's
  // MPI sees the receiver's answer. The receive is pre-posted, so when the
  // receiver is already waiting the hand-shake takes microseconds: drive
  // progress briefly (at most kSendSpin) before computing again, instead of
  // leaving the receiver idle until the next layer's progress call.
  constexpr double kSendSpin = 2e-4;
  const sp::Elapsed spin;
  bool done = t_.test(h);
  while (!done && spin.seconds() < kSendSpin) done = t_.test(h);
  if (!done) in_flight_.push_back({h, buf});
}

void PipelineExecutor::progress() {
  // Testing a request runs the MPI progress engine; completed sends are dropped.
  for (size_t i = 0; i < in_flight_.size();)
    if (t_.test(in_flight_[i].handle))
      in_flight_.erase(in_flight_.begin() + i);
    else
      ++i;
  if (!posted_.empty()) t_.test(posted_.begin()->second.handle);
}

PipeStats PipelineExecutor::step(const std::vector<Mat>& inputs, const std::vector<Mat>& out_grads) {
  PipeStats st;
  const int C = sched_.chunks(), m = sched_.m;
  for (auto& [c, ls] : chunks_)
    for (auto& l : ls) Kokkos::deep_copy(l.dW, 0.0);
  outputs_.assign(m, Mat());
  input_grads_.assign(m, Mat());
  const comm::Traffic before = t_.total();
  std::map<std::pair<int, int>, std::vector<LayerStash>> stash;  // (mb, chunk) -> per layer
  size_t stash_elems = 0;
  const sp::Elapsed clock;  // the step's timeline (the harness's clock)
  post_receives();
  for (const Op& op : sched_.ranks[rank_]) {
    auto& ls = chunks_.at(op.chunk);
    if (op.kind == Kind::F) {
      Mat x = op.chunk == 0 ? inputs.at(op.mb) : receive(Kind::F, op.mb, op.chunk, owner(op.chunk - 1));
      const double t0 = clock.seconds();
      auto& s = stash[{op.mb, op.chunk}];
      s.resize(ls.size());
      for (size_t j = 0; j < ls.size(); ++j) {
        x = layer_forward(ls[j], x, s[j]);
        stash_elems += s[j].elems();
        progress();
      }
      Kokkos::fence();
      const double t1 = clock.seconds();
      st.busy += t1 - t0;
      st.timeline.push_back({op, t0, t1});
      st.peak_stash = std::max(st.peak_stash, static_cast<int>(stash.size()));
      st.peak_stash_elems = std::max(st.peak_stash_elems, stash_elems);
      if (op.chunk == C - 1)
        outputs_[op.mb] = x;
      else
        deliver(Kind::F, op.mb, op.chunk + 1, owner(op.chunk + 1), x);
    } else {
      Mat dy = op.chunk == C - 1 ? out_grads.at(op.mb) : receive(Kind::B, op.mb, op.chunk, owner(op.chunk + 1));
      const double t0 = clock.seconds();
      auto it = stash.find({op.mb, op.chunk});
      for (int j = static_cast<int>(ls.size()) - 1; j >= 0; --j) {
        dy = layer_backward(ls[j], it->second[j], dy);
        stash_elems -= it->second[j].elems();
        progress();
      }
      stash.erase(it);  // the activations are freed once the backward has used them
      Kokkos::fence();
      const double t1 = clock.seconds();
      st.busy += t1 - t0;
      st.timeline.push_back({op, t0, t1});
      if (op.chunk == 0)
        input_grads_[op.mb] = dy;
      else
        deliver(Kind::B, op.mb, op.chunk - 1, owner(op.chunk - 1), dy);
    }
  }
  t_.wait_all();
  st.step = clock.seconds();
  in_flight_.clear();
  const comm::Traffic after = t_.total();
  st.messages_sent = after.messages_sent - before.messages_sent;
  st.bytes_sent = after.bytes_sent - before.bytes_sent;
  st.messages_recv = after.messages_recv - before.messages_recv;
  st.bytes_recv = after.bytes_recv - before.bytes_recv;
  return st;
}

}  // namespace sp::mp
