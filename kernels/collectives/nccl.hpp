#pragma once
// NCCL on device memory (CUDA builds with NCCL; compiled, not run, on
// machines without a GPU): one communicator over MPI_COMM_WORLD, a
// Transport over ncclSend/ncclRecv, and NCCL's own collectives as the
// vendor baseline on a GPU.
#ifdef SP_HAVE_NCCL
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/collectives/fp16.hpp"
#include "kernels/comm/ring.hpp"
#include "scaleproof/comm.hpp"
#include "kernels/comm/transport.hpp"

namespace sp::coll::nccl {

inline void ok(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r));
}
inline void ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// The world communicator, created at first use: rank 0 makes the unique id
// and MPI broadcasts it. The device is the one Kokkos selected for this
// process. Never destroyed: ncclCommDestroy after MPI_Finalize can hang.
class Comm {
 public:
  static Comm& world() {
    static Comm* c = new Comm();
    return *c;
  }
  ncclComm_t get() const { return comm_; }
  cudaStream_t stream() const { return stream_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  void sync() const { ok(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

 private:
  Comm() {
    MPI_Comm world = sp::comm::world();
    MPI_Comm_rank(world, &rank_);
    MPI_Comm_size(world, &size_);
    ncclUniqueId id;
    if (rank_ == 0) ok(ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, world);
    ok(cudaStreamCreate(&stream_), "cudaStreamCreate");
    ok(ncclCommInitRank(&comm_, size_, id, rank_), "ncclCommInitRank");
  }
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  int rank_ = 0, size_ = 1;
};

template <class T>
ncclDataType_t type() {
  if constexpr (std::is_same_v<T, float>)
    return ncclFloat32;
  else if constexpr (std::is_same_v<T, double>)
    return ncclFloat64;
  else if constexpr (std::is_same_v<T, int32_t>)
    return ncclInt32;
  else
    return ncclFloat16;  // fp16 is bit-compatible with __half
}
inline ncclRedOp_t op(comm::Op o) { return o == comm::Op::sum ? ncclSum : o == comm::Op::max ? ncclMax : ncclMin; }

// Blocking point-to-point on device memory: each sendrecv is one NCCL group
// (so a ring exchange cannot deadlock) followed by a stream synchronise.
// isend/irecv are queued and issued as one group at the next wait.
class NcclTransport : public comm::Transport {
 public:
  NcclTransport() : c_(Comm::world()) {}
  int rank() const override { return c_.rank(); }
  int size() const override { return c_.size(); }
  std::string name() const override { return "nccl"; }
  void sendrecv(const void* sbuf, size_t sbytes, int dst, void* rbuf, size_t rbytes, int src) override {
    ok(ncclGroupStart(), "ncclGroupStart");
    if (dst >= 0) ok(ncclSend(sbuf, sbytes, ncclUint8, dst, c_.get(), c_.stream()), "ncclSend");
    if (src >= 0) ok(ncclRecv(rbuf, rbytes, ncclUint8, src, c_.get(), c_.stream()), "ncclRecv");
    ok(ncclGroupEnd(), "ncclGroupEnd");
    c_.sync();
    if (dst >= 0) count_send(sbytes);
    if (src >= 0) count_recv(rbytes);
  }
  int isend(const void* buf, size_t bytes, int dst, int) override {
    queue_.push_back({const_cast<void*>(buf), bytes, dst, true});
    count_send(bytes);
    return static_cast<int>(queue_.size()) - 1;
  }
  int irecv(void* buf, size_t bytes, int src, int) override {
    queue_.push_back({buf, bytes, src, false});
    count_recv(bytes);
    return static_cast<int>(queue_.size()) - 1;
  }
  void wait(int) override { wait_all(); }
  bool test(int) override {
    wait_all();
    return true;
  }
  void wait_all() override {
    if (queue_.empty()) return;
    ok(ncclGroupStart(), "ncclGroupStart");
    for (auto& q : queue_)
      ok(q.send ? ncclSend(q.buf, q.bytes, ncclUint8, q.peer, c_.get(), c_.stream())
                : ncclRecv(q.buf, q.bytes, ncclUint8, q.peer, c_.get(), c_.stream()),
         "ncclSend/Recv");
    ok(ncclGroupEnd(), "ncclGroupEnd");
    c_.sync();
    queue_.clear();
  }

 private:
  struct Pending {
    void* buf;
    size_t bytes;
    int peer;
    bool send;
  };
  Comm& c_;
  std::vector<Pending> queue_;
};

// NCCL's collectives with this suite's conventions (Partition{n, p} chunks
// at rank r's position). Even chunks use ncclReduceScatter/ncclAllGather;
// uneven ones a group of per-chunk ncclReduce/ncclBroadcast calls.
template <class T>
void run_collective(const std::string& coll, const T* send, T* recv, size_t n, comm::Op o, int root) {
  auto& c = Comm::world();
  const int p = c.size(), r = c.rank();
  const comm::Partition part{n, p};
  auto s = c.stream();
  if (coll == "all_reduce") {
    ok(ncclAllReduce(send, recv, n, type<T>(), op(o), c.get(), s), "ncclAllReduce");
  } else if (coll == "reduce_scatter") {
    if (n % p == 0) {
      ok(ncclReduceScatter(send, recv + part.begin(r), n / p, type<T>(), op(o), c.get(), s), "ncclReduceScatter");
    } else {
      ok(ncclGroupStart(), "ncclGroupStart");
      for (int k = 0; k < p; ++k)
        ok(ncclReduce(send + part.begin(k), recv + part.begin(k), part.size(k), type<T>(), op(o), k, c.get(), s),
           "ncclReduce");
      ok(ncclGroupEnd(), "ncclGroupEnd");
    }
  } else if (coll == "all_gather") {
    if (n % p == 0) {
      ok(ncclAllGather(send + part.begin(r), recv, n / p, type<T>(), c.get(), s), "ncclAllGather");
    } else {
      ok(ncclGroupStart(), "ncclGroupStart");
      for (int k = 0; k < p; ++k)
        ok(ncclBroadcast(send + part.begin(k), recv + part.begin(k), part.size(k), type<T>(), k, c.get(), s),
           "ncclBroadcast");
      ok(ncclGroupEnd(), "ncclGroupEnd");
    }
  } else if (coll == "broadcast") {
    ok(ncclBroadcast(send, recv, n, type<T>(), root, c.get(), s), "ncclBroadcast");
  } else if (coll == "reduce") {
    ok(ncclReduce(send, recv, n, type<T>(), op(o), root, c.get(), s), "ncclReduce");
  } else {
    throw std::logic_error("nccl: no collective " + coll);
  }
  c.sync();
}

}  // namespace sp::coll::nccl
#endif
