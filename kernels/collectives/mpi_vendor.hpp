#pragma once
// The vendor baseline: MPICH's own collectives on the same buffers, with the
// same conventions as the project's algorithms (result chunks at rank r's
// position of Partition{n, p}, in-place buffers as nccl-tests uses them).
// When p does not divide n the block variants (MPI_Reduce_scatter_block,
// MPI_Allgather) cannot express the uneven chunks, so the v-variants
// (MPI_Reduce_scatter, MPI_Allgatherv) with the same counts are called.
// fp16 has no predefined MPI type in MPI 3.1 / MPICH 4.0: it travels as a
// 2-byte contiguous type with user-defined ops that combine in float.
#ifdef SP_HAVE_MPI
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/collectives/fp16.hpp"
#include "kernels/comm/ring.hpp"
#include "scaleproof/comm.hpp"

namespace sp::coll::mpi {

namespace detail {
template <comm::Op O>
void fp16_op(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<fp16*>(in);
  auto* b = static_cast<fp16*>(inout);
  for (int i = 0; i < *len; ++i) {
    if (O == comm::Op::sum)
      b[i] += a[i];
    else if (O == comm::Op::max)
      b[i] = b[i] < a[i] ? a[i] : b[i];
    else
      b[i] = a[i] < b[i] ? a[i] : b[i];
  }
}
// The fp16 type and ops live until MPI_Finalize, which frees them through
// an attribute on MPI_COMM_SELF (MPI 3.1, 8.7.1: such attributes are
// deleted first thing in MPI_Finalize).
struct Fp16Handles {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op ops[3] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
};
inline Fp16Handles& fp16_handles() {
  static Fp16Handles h;
  return h;
}
inline int free_fp16_handles(MPI_Comm, int, void*, void*) {
  auto& h = fp16_handles();
  if (h.type != MPI_DATATYPE_NULL) MPI_Type_free(&h.type);
  for (auto& o : h.ops)
    if (o != MPI_OP_NULL) MPI_Op_free(&o);
  return MPI_SUCCESS;
}
inline MPI_Datatype fp16_type() {
  auto& h = fp16_handles();
  if (h.type == MPI_DATATYPE_NULL) {
    MPI_Type_contiguous(2, MPI_BYTE, &h.type);
    MPI_Type_commit(&h.type);
    int key = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &free_fp16_handles, &key, nullptr);
    MPI_Comm_set_attr(comm::self(), key, nullptr);
  }
  return h.type;
}
inline MPI_Op fp16_mpi_op(comm::Op op) {
  fp16_type();  // registers the clean-up
  auto& o = fp16_handles().ops[static_cast<int>(op)];
  if (o == MPI_OP_NULL)
    MPI_Op_create(op == comm::Op::sum   ? &fp16_op<comm::Op::sum>
                  : op == comm::Op::max ? &fp16_op<comm::Op::max>
                                        : &fp16_op<comm::Op::min>,
                  1, &o);
  return o;
}
}  // namespace detail

template <class T>
MPI_Datatype type() {
  if constexpr (std::is_same_v<T, float>)
    return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>)
    return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, int32_t>)
    return MPI_INT32_T;
  else
    return detail::fp16_type();
}

template <class T>
MPI_Op op(comm::Op o) {
  if constexpr (std::is_same_v<T, fp16>)
    return detail::fp16_mpi_op(o);
  else
    return o == comm::Op::sum ? MPI_SUM : o == comm::Op::max ? MPI_MAX : MPI_MIN;
}

// Counts and displacements of Partition{n, p}, as MPI's int arrays.
struct Blocks {
  std::vector<int> counts, displs;
  Blocks(size_t n, int p) {
    const comm::Partition part{n, p};
    for (int c = 0; c < p; ++c) {
      counts.push_back(static_cast<int>(part.size(c)));
      displs.push_back(static_cast<int>(part.begin(c)));
    }
  }
};

// send == recv: in place.
template <class T>
void all_reduce(MPI_Comm comm, const T* send, T* recv, size_t n, comm::Op o) {
  MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, static_cast<int>(n), type<T>(), op<T>(o), comm);
}

// recv: the whole buffer; rank r's result lands at chunk r's position.
template <class T>
void reduce_scatter(MPI_Comm comm, const T* send, T* recv, size_t n, comm::Op o) {
  int p, r;
  MPI_Comm_size(comm, &p), MPI_Comm_rank(comm, &r);
  const comm::Partition part{n, p};
  const bool inplace = send == recv;
  T* out = inplace ? recv : recv + part.begin(r);  // MPI_IN_PLACE leaves the result at the start
  if (n % p == 0) {
    MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : send, out, static_cast<int>(n / p), type<T>(), op<T>(o), comm);
  } else {
    Blocks b(n, p);
    MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : send, out, b.counts.data(), type<T>(), op<T>(o), comm);
  }
  if (inplace && part.begin(r) != 0) std::memmove(recv + part.begin(r), recv, part.size(r) * sizeof(T));
}

// send: the whole buffer, of which rank r contributes chunk r.
template <class T>
void all_gather(MPI_Comm comm, const T* send, T* recv, size_t n) {
  int p, r;
  MPI_Comm_size(comm, &p), MPI_Comm_rank(comm, &r);
  const comm::Partition part{n, p};
  const bool inplace = send == recv;
  const void* mine = inplace ? MPI_IN_PLACE : static_cast<const void*>(send + part.begin(r));
  if (n % p == 0) {
    MPI_Allgather(mine, static_cast<int>(n / p), type<T>(), recv, static_cast<int>(n / p), type<T>(), comm);
  } else {
    Blocks b(n, p);
    MPI_Allgatherv(mine, static_cast<int>(part.size(r)), type<T>(), recv, b.counts.data(), b.displs.data(), type<T>(),
                   comm);
  }
}

template <class T>
void broadcast(MPI_Comm comm, T* data, size_t n, int root) {
  MPI_Bcast(data, static_cast<int>(n), type<T>(), root, comm);
}

template <class T>
void reduce(MPI_Comm comm, const T* send, T* recv, size_t n, comm::Op o, int root) {
  int r;
  MPI_Comm_rank(comm, &r);
  const bool inplace = send == recv;
  // MPICH 4.0.2 crashes on MPI_IN_PLACE at a non-zero root when it picks
  // the reduce-scatter-gather algorithm (docs/collectives.md, "Known vendor
  // issue"): there the root reduces into a scratch buffer and copies back,
  // the same extra copy MPICH's own fix makes.
  if (inplace && r == root && root != 0) {
    std::vector<T> scratch(n);
    MPI_Reduce(send, scratch.data(), static_cast<int>(n), type<T>(), op<T>(o), root, comm);
    std::memcpy(recv, scratch.data(), n * sizeof(T));
    return;
  }
  // recvbuf is not significant off the root: pass none (aliasing it with
  // the send buffer is not allowed).
  MPI_Reduce(inplace && r == root ? MPI_IN_PLACE : send, r == root ? recv : nullptr, static_cast<int>(n), type<T>(),
             op<T>(o), root, comm);
}

}  // namespace sp::coll::mpi
#endif
