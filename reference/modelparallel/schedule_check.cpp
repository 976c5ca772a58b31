// List-scheduling simulation of per-rank operation lists with dependency
// tracking; see schedule_check.hpp for the rules checked.
#include "reference/modelparallel/schedule_check.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace sp::reference {

namespace {

using Key = std::tuple<char, int, int>;  // (kind, micro-batch, chunk)

std::string describe(const mp::Op& o) {
  return std::string(1, static_cast<char>(o.kind)) + "(mb " + std::to_string(o.mb) + ", chunk " +
         std::to_string(o.chunk) + ")";
}

}  // namespace

ScheduleSim simulate_schedule(const std::vector<std::vector<mp::Op>>& ranks, int p, int m, int v, double tf,
                              double tb) {
  return simulate_schedule(ranks, p, m, v, [&](int i, size_t k) { return ranks[i][k].kind == mp::Kind::F ? tf : tb; });
}

ScheduleSim simulate_schedule(const std::vector<std::vector<mp::Op>>& ranks, int p, int m, int v,
                              const std::function<double(int, size_t)>& cost_of) {
  ScheduleSim r;
  const int C = p * v;
  if (static_cast<int>(ranks.size()) != p) {
    r.error = "expected " + std::to_string(p) + " rank lists, got " + std::to_string(ranks.size());
    return r;
  }
  // Ownership and exactly-once, before any simulation.
  std::map<Key, int> seen;
  for (int i = 0; i < p; ++i)
    for (auto& o : ranks[i]) {
      if (o.mb < 0 || o.mb >= m || o.chunk < 0 || o.chunk >= C) {
        r.error = describe(o) + " out of range on rank " + std::to_string(i);
        return r;
      }
      if (o.chunk % p != i) {
        r.error = describe(o) + " on rank " + std::to_string(i) + ", but its chunk lives on rank " +
                  std::to_string(o.chunk % p);
        return r;
      }
      if (++seen[{static_cast<char>(o.kind), o.mb, o.chunk}] > 1) {
        r.error = describe(o) + " appears twice";
        return r;
      }
    }
  if (static_cast<int>(seen.size()) != 2 * m * C) {
    r.error = "expected " + std::to_string(2 * m * C) + " distinct operations, found " + std::to_string(seen.size());
    return r;
  }

  // Simulation: finish time of every completed operation.
  std::map<Key, double> done;
  auto finished = [&](char k, int mb, int c, double& t) {
    auto it = done.find({k, mb, c});
    if (it == done.end()) return false;
    t = std::max(t, it->second);
    return true;
  };
  std::vector<size_t> pc(p, 0);
  std::vector<double> free_at(p, 0);
  std::vector<int> stash(p, 0);
  r.busy.assign(p, 0);
  r.peak_stash.assign(p, 0);
  r.start.assign(p, {});
  size_t remaining = 2 * static_cast<size_t>(m) * C;
  while (remaining > 0) {
    bool progressed = false;
    for (int i = 0; i < p; ++i) {
      while (pc[i] < ranks[i].size()) {
        const mp::Op& o = ranks[i][pc[i]];
        double t = free_at[i];
        bool ready = true;
        if (o.kind == mp::Kind::F) {
          if (o.chunk > 0) ready = finished('F', o.mb, o.chunk - 1, t);
        } else {
          // B needs its own forward (same rank: earlier in this list) and the gradient from downstream.
          if (!done.count({'F', o.mb, o.chunk})) {
            r.error = describe(o) + " on rank " + std::to_string(i) + " comes before its forward";
            return r;
          }
          if (o.chunk < C - 1) ready = finished('B', o.mb, o.chunk + 1, t);
        }
        if (!ready) break;
        const double cost = cost_of(i, pc[i]);
        r.start[i].push_back(t);
        done[{static_cast<char>(o.kind), o.mb, o.chunk}] = t + cost;
        free_at[i] = t + cost;
        r.busy[i] += cost;
        stash[i] += o.kind == mp::Kind::F ? 1 : -1;
        r.peak_stash[i] = std::max(r.peak_stash[i], stash[i]);
        ++pc[i];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) {
      std::string where;
      for (int i = 0; i < p; ++i)
        if (pc[i] < ranks[i].size())
          where += " rank " + std::to_string(i) + " waits at " + describe(ranks[i][pc[i]]) + ";";
      r.error = "deadlock:" + where;
      return r;
    }
  }
  r.makespan = *std::max_element(free_at.begin(), free_at.end());
  r.ok = true;
  return r;
}

}  // namespace sp::reference
