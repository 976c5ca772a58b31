#pragma once
// A non-blocking ring reduce-scatter / all-gather / all-reduce on host
// memory, built on Transport::isend/irecv/test, so that communication can
// proceed while the backward (or forward) pass computes: the trainer calls
// progress() between layer kernels and finish() when it needs the result.
// Same chunk schedule as kernels/comm/ring.hpp (rank r owns chunk r of
// Partition{n, p} after the reduce-scatter), so traffic is identical:
// (p-1)/p n elements sent per phase.
//
// With MPICH (no asynchronous progress thread) messages move only inside MPI
// calls; progress() is such a call, which is why it is sprinkled through the
// compute loop. Several NbRing may be in flight at once: each uses its own tag.
#include <vector>

#include "kernels/comm/ring.hpp"

namespace sp::dp {

template <class T>
class NbRing {
 public:
  enum class Kind { reduce_scatter, all_gather, all_reduce };

  NbRing(comm::Transport& t, T* data, size_t n, Kind kind, int tag)
      : t_(t), data_(data), part_{n, t.size()}, kind_(kind), tag_(tag) {
    const int p = t.size();
    steps_total_ = p == 1 ? 0 : (kind == Kind::all_reduce ? 2 : 1) * (p - 1);
    if (kind != Kind::all_gather) tmp_.resize(part_.size(0));
    post();
  }
  NbRing(const NbRing&) = delete;
  NbRing& operator=(const NbRing&) = delete;

  bool done() const { return step_ >= steps_total_; }
  size_t buffer_bytes() const { return tmp_.size() * sizeof(T); }

  // Advances as far as the messages that arrived allow; never blocks.
  void progress() {
    while (!done() && t_.test(send_) && t_.test(recv_)) complete_step();
  }
  void finish() {
    while (!done()) {
      t_.wait(send_), t_.wait(recv_);
      complete_step();
    }
  }

 private:
  bool in_reduce_phase() const {
    return kind_ == Kind::reduce_scatter || (kind_ == Kind::all_reduce && step_ < t_.size() - 1);
  }
  int phase_step() const { return kind_ == Kind::all_reduce && !in_reduce_phase() ? step_ - (t_.size() - 1) : step_; }

  void post() {
    if (done()) return;
    const int p = t_.size(), r = t_.rank(), s = phase_step();
    const int right = (r + 1) % p, left = (r - 1 + p) % p;
    if (in_reduce_phase()) {
      t_.set_phase("reduce-scatter");
      const int cs = (r - s - 1 + 2 * p) % p;
      cr_ = (r - s - 2 + 2 * p) % p;
      recv_ = t_.irecv(tmp_.data(), part_.size(cr_) * sizeof(T), left, tag_);
      send_ = t_.isend(data_ + part_.begin(cs), part_.size(cs) * sizeof(T), right, tag_);
    } else {
      t_.set_phase("all-gather");
      const int cs = (r - s + p) % p;
      cr_ = (r - s - 1 + 2 * p) % p;
      recv_ = t_.irecv(data_ + part_.begin(cr_), part_.size(cr_) * sizeof(T), left, tag_);
      send_ = t_.isend(data_ + part_.begin(cs), part_.size(cs) * sizeof(T), right, tag_);
    }
  }

  void complete_step() {
    if (in_reduce_phase()) comm::reduce_into(data_ + part_.begin(cr_), tmp_.data(), part_.size(cr_), comm::Op::sum);
    ++step_;
    post();
  }

  comm::Transport& t_;
  T* data_;
  comm::Partition part_;
  Kind kind_;
  int tag_;
  std::vector<T> tmp_;
  int steps_total_ = 0, step_ = 0, cr_ = 0, send_ = -1, recv_ = -1;
};

}  // namespace sp::dp
