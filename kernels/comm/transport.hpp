#pragma once
// Point-to-point transports of the shared communication layer: the
// collective algorithms, the data-parallel, model-parallel and hybrid
// techniques all move their bytes through one. A transport moves raw bytes between
// ranks and counts every byte and message it sends and receives, per phase
// label, so traffic can be checked against the formulas of docs/collectives.md
// (e.g. (p-1)n/p per ring phase).
//
// MpiTransport moves host memory over MPI point-to-point. Device data is
// staged through the host by the caller (see the collectives algorithms);
// an NCCL transport on device memory is added by the collectives family when
// CUDA and NCCL are enabled.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "scaleproof/comm.hpp"

namespace sp::comm {

struct Traffic {
  uint64_t bytes_sent = 0, bytes_recv = 0, messages_sent = 0, messages_recv = 0;
  Traffic& operator+=(const Traffic& o) {
    bytes_sent += o.bytes_sent, bytes_recv += o.bytes_recv;
    messages_sent += o.messages_sent, messages_recv += o.messages_recv;
    return *this;
  }
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;

  // Blocking: send sbytes to dst while receiving rbytes from src (deadlock-free
  // for ring exchanges). Either side may be skipped with a negative rank.
  virtual void sendrecv(const void* sbuf, size_t sbytes, int dst, void* rbuf, size_t rbytes, int src) = 0;
  void send(const void* buf, size_t bytes, int dst) { sendrecv(buf, bytes, dst, nullptr, 0, -1); }
  void recv(void* buf, size_t bytes, int src) { sendrecv(nullptr, 0, -1, buf, bytes, src); }

  // Non-blocking; handles complete in wait() / wait_all(). Buffers must stay
  // alive until then. Tags separate concurrent streams (e.g. pipeline
  // activations vs gradients).
  virtual int isend(const void* buf, size_t bytes, int dst, int tag = 0) = 0;
  virtual int irecv(void* buf, size_t bytes, int src, int tag = 0) = 0;
  virtual void wait(int handle) = 0;
  virtual bool test(int handle) = 0;  // progresses; true when complete
  virtual void wait_all() = 0;

  // Traffic is attributed to the current phase ("reduce-scatter", "all-gather", ...).
  void set_phase(const std::string& phase) { phase_ = phase; }
  const std::string& phase() const { return phase_; }
  const std::map<std::string, Traffic>& traffic() const { return traffic_; }
  Traffic total() const {
    Traffic t;
    for (auto& [k, v] : traffic_) t += v;
    return t;
  }
  void reset_traffic() { traffic_.clear(); }

 protected:
  void count_send(size_t bytes) {
    auto& t = traffic_[phase_];
    t.bytes_sent += bytes, t.messages_sent += 1;
  }
  void count_recv(size_t bytes) {
    auto& t = traffic_[phase_];
    t.bytes_recv += bytes, t.messages_recv += 1;
  }

 private:
  std::string phase_ = "default";
  std::map<std::string, Traffic> traffic_;
};

#ifdef SP_HAVE_MPI
class MpiTransport : public Transport {
 public:
  explicit MpiTransport(MPI_Comm comm = comm::world()) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "mpi"; }
  MPI_Comm comm() const { return comm_; }

  void sendrecv(const void* sbuf, size_t sbytes, int dst, void* rbuf, size_t rbytes, int src) override {
    check_count(sbytes), check_count(rbytes);
    MPI_Sendrecv(sbuf, static_cast<int>(sbytes), MPI_BYTE, dst < 0 ? MPI_PROC_NULL : dst, 0, rbuf,
                 static_cast<int>(rbytes), MPI_BYTE, src < 0 ? MPI_PROC_NULL : src, 0, comm_, MPI_STATUS_IGNORE);
    if (dst >= 0) count_send(sbytes);
    if (src >= 0) count_recv(rbytes);
  }

  int isend(const void* buf, size_t bytes, int dst, int tag) override {
    check_count(bytes);
    reqs_.push_back(MPI_REQUEST_NULL);
    MPI_Isend(buf, static_cast<int>(bytes), MPI_BYTE, dst, tag, comm_, &reqs_.back());
    count_send(bytes);
    return static_cast<int>(reqs_.size()) - 1;
  }
  int irecv(void* buf, size_t bytes, int src, int tag) override {
    check_count(bytes);
    reqs_.push_back(MPI_REQUEST_NULL);
    MPI_Irecv(buf, static_cast<int>(bytes), MPI_BYTE, src, tag, comm_, &reqs_.back());
    count_recv(bytes);
    return static_cast<int>(reqs_.size()) - 1;
  }
  void wait(int h) override { MPI_Wait(&reqs_.at(h), MPI_STATUS_IGNORE); }
  bool test(int h) override {
    int done = 0;
    MPI_Test(&reqs_.at(h), &done, MPI_STATUS_IGNORE);
    return done != 0;
  }
  void wait_all() override {
    MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
    reqs_.clear();
  }

 private:
  // MPI counts are int: larger messages must be split by the caller.
  static void check_count(size_t bytes) {
    if (bytes > static_cast<size_t>(INT32_MAX)) throw std::length_error("message above 2^31-1 bytes");
  }
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::vector<MPI_Request> reqs_;
};
#endif

// One rank, no MPI: messages to oneself are copies (sends are matched by
// receives in order). Lets every algorithm run at p = 1 in any build.
class SelfTransport : public Transport {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "self"; }
  void sendrecv(const void* sbuf, size_t sbytes, int dst, void* rbuf, size_t rbytes, int src) override {
    if (dst == 0 && src == 0) std::memcpy(rbuf, sbuf, rbytes < sbytes ? rbytes : sbytes);
    if (dst == 0) count_send(sbytes);
    if (src == 0) count_recv(rbytes);
  }
  int isend(const void* buf, size_t bytes, int, int) override {
    pending_.push_back({buf, bytes});
    count_send(bytes);
    return 0;
  }
  int irecv(void* buf, size_t bytes, int, int) override {
    if (pending_.empty()) throw std::logic_error("self transport: receive without a matching send");
    std::memcpy(buf, pending_.front().first, bytes);
    pending_.erase(pending_.begin());
    count_recv(bytes);
    return 0;
  }
  void wait(int) override {}
  bool test(int) override { return true; }
  void wait_all() override {}

 private:
  std::vector<std::pair<const void*, size_t>> pending_;
};

// The world transport for this build: MPI when built with it, else self.
inline std::unique_ptr<Transport> make_world_transport() {
#ifdef SP_HAVE_MPI
  return std::make_unique<MpiTransport>();
#else
  return std::make_unique<SelfTransport>();
#endif
}

}  // namespace sp::comm
