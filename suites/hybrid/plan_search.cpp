// The planner's search; see plan_search.hpp.
#include "suites/hybrid/plan_search.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "kernels/hybrid/cost_model.hpp"

namespace sp::hybrid::plan {

namespace {

std::vector<int> divisors(long long n) {
  std::vector<int> d;
  for (long long i = 1; i * i <= n; ++i)
    if (n % i == 0) {
      d.push_back(static_cast<int>(i));
      if (i != n / i) d.push_back(static_cast<int>(n / i));
    }
  std::sort(d.begin(), d.end());
  return d;
}

constexpr const char* kNoFit = "memory: does not fit in --memory per rank";

}  // namespace

std::vector<Layout> enumerate_layouts(const ModelShape& m, int ranks, StorageType storage) {
  std::vector<Layout> out;
  std::vector<std::pair<mp::ScheduleKind, int>> pipes = {{mp::ScheduleKind::gpipe, 1},
                                                         {mp::ScheduleKind::one_f_one_b, 1}};
  for (int v = 2; v <= 8; ++v) pipes.push_back({mp::ScheduleKind::interleaved, v});
  std::vector<int> ckpts = {0};
  for (int k = 1; k <= m.layers; k *= 2) ckpts.push_back(k);
  const auto mbs = divisors(m.global_batch);
  for (int dp : divisors(ranks))
    for (int tp : divisors(ranks / dp)) {
      const int pp = ranks / dp / tp;
      for (auto [kind, v] : pipes) {
        // One stage has no pipeline: a schedule only orders its micro-batches,
        // and 1F1B's order (each backward right after its forward) is the same
        // work as the others with the fewest activations held.
        if (pp == 1 && kind != mp::ScheduleKind::one_f_one_b) continue;
        for (int mb : mbs)
          for (int z = 0; z <= (dp > 1 ? 3 : 0); ++z)  // ZeRO over one rank is no ZeRO
            for (int k : ckpts) {
              Layout l;
              l.dp = dp, l.tp = tp, l.pp = pp, l.v = v, l.micro_batches = mb, l.schedule = kind;
              l.zero_stage = z, l.storage = storage, l.ckpt_every = k;
              out.push_back(l);
            }
      }
    }
  return out;
}

StepWork work_of(const ModelShape& m, const Layout& l, int rank) {
  const TrafficPerStep tr = predict_traffic(m, l, rank);
  StepWork w;
  w.gemms = predict_gemms(m, l, rank);
  w.elementwise_bytes = predict_elementwise_bytes(m, l, rank);
  w.shard_bytes = predict_shard_bytes(m, l, rank);
  w.optimizer_bytes = predict_optimizer_bytes(m, l, rank);
  w.attention = predict_attention(m, l, rank);
  const double t = l.tp, d = l.dp;
  w.tp.latency_steps = static_cast<double>(tr.tp_collectives) * 2 * (t - 1);
  w.tp.bytes_sent = tr.tp_bytes;
  w.tp.bytes_reduced = tr.tp_bytes / 2;  // ring all-reduce: reduce-scatter half of what it sends
  // Without ZeRO one all-reduce per gradient bucket; with ZeRO reduce-scatters
  // (the only reducing part) and all-gathers of equal size, stage 3 gathering twice.
  const double steps_per = l.zero_stage == 0 ? 2 * (d - 1) : (d - 1);
  w.dp.latency_steps = static_cast<double>(tr.dp_collectives) * steps_per;
  w.dp.bytes_sent = tr.dp_bytes;
  w.dp.bytes_reduced = tr.dp_bytes / (l.zero_stage == 3 ? 3 : 2);
  w.pp_messages = static_cast<double>(tr.pp_messages);
  w.pp_bytes = tr.pp_bytes;
  w.schedule = l.schedule;
  w.p = l.pp, w.m = l.micro_batches, w.v = l.v;
  return w;
}

Candidate evaluate(const Request& r, const Layout& l) {
  Candidate c;
  c.layout = l;
  c.memory = megatron::memory_per_gpu(r.model, l, r.memory);
  // Stages hold equal block counts; the first adds the embedding, the last the logits.
  c.time = predict_step_time(work_of(r.model, l, 0), r.machine);
  if (l.pp > 1) {
    const StepTime last = predict_step_time(work_of(r.model, l, (l.pp - 1) * l.dp * l.tp), r.machine);
    if (last.total > c.time.total) c.time = last;
  }
  return c;
}

std::string reason_family(const std::string& why) {
  std::string s;
  for (size_t i = 0; i < why.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(why[i]))) {
      while (i + 1 < why.size() && std::isdigit(static_cast<unsigned char>(why[i + 1]))) ++i;
      s += 'N';
    } else {
      s += why[i];
    }
  }
  return s;
}

std::string describe(const Layout& l) {
  std::string s = "dp=" + std::to_string(l.dp) + " tp=" + std::to_string(l.tp) + " pp=" + std::to_string(l.pp) + " " +
                  mp::to_string(l.schedule);
  if (l.schedule == mp::ScheduleKind::interleaved) s += " v=" + std::to_string(l.v);
  return s + " m=" + std::to_string(l.micro_batches) + " zero=" + std::to_string(l.zero_stage) +
         " ckpt=" + std::to_string(l.ckpt_every);
}

Plan make_plan(const Request& r) {
  Plan p;
  std::map<std::string, long long> why;
  for (const Layout& l : enumerate_layouts(r.model, r.ranks, r.storage)) {
    ++p.enumerated;
    const std::string err = layout_error(r.model, l, r.ranks);
    if (!err.empty()) {
      ++why[reason_family(err)];
      continue;
    }
    const double mem = megatron::memory_per_gpu(r.model, l, r.memory).total();
    if (mem > r.memory_bytes) {
      ++why[kNoFit];
      if (p.smallest_rejected_memory == 0 || mem < p.smallest_rejected_memory) p.smallest_rejected_memory = mem;
      continue;
    }
    p.ranked.push_back(evaluate(r, l));
  }
  std::stable_sort(p.ranked.begin(), p.ranked.end(), [](const Candidate& a, const Candidate& b) {
    if (a.time.total != b.time.total) return a.time.total < b.time.total;
    return a.memory.total() < b.memory.total();
  });
  p.rejected.assign(why.begin(), why.end());
  std::stable_sort(p.rejected.begin(), p.rejected.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return p;
}

}  // namespace sp::hybrid::plan
