#pragma once
// Element types and reduction operators of the collectives, their names
// (the project's fp32 style and nccl-tests' float style both parse), and a
// dispatch from the run-time type to a compile-time one.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/collectives/fp16.hpp"
#include "kernels/comm/reduce.hpp"
#include "scaleproof/params.hpp"

namespace sp::coll {

enum class Dtype { fp16, fp32, fp64, int32 };

inline Dtype parse_dtype(const std::string& s) {
  if (s == "fp16" || s == "half") return Dtype::fp16;
  if (s == "fp32" || s == "float") return Dtype::fp32;
  if (s == "fp64" || s == "double") return Dtype::fp64;
  if (s == "int32" || s == "int") return Dtype::int32;
  throw InputError("unknown type '" + s + "' (fp16, fp32, fp64, int32 or half, float, double, int32)");
}
inline const char* dtype_name(Dtype d) {
  switch (d) {
    case Dtype::fp16: return "fp16";
    case Dtype::fp32: return "fp32";
    case Dtype::fp64: return "fp64";
    default: return "int32";
  }
}
// The names nccl-tests prints in its type column.
inline const char* nccl_type_name(Dtype d) {
  switch (d) {
    case Dtype::fp16: return "half";
    case Dtype::fp32: return "float";
    case Dtype::fp64: return "double";
    default: return "int32";
  }
}
inline size_t dtype_size(Dtype d) {
  switch (d) {
    case Dtype::fp16: return 2;
    case Dtype::fp64: return 8;
    default: return 4;
  }
}

inline comm::Op parse_op(const std::string& s) {
  if (s == "sum") return comm::Op::sum;
  if (s == "max") return comm::Op::max;
  if (s == "min") return comm::Op::min;
  throw InputError("unknown op '" + s + "' (sum, max or min)");
}
inline const char* op_name(comm::Op o) { return o == comm::Op::sum ? "sum" : o == comm::Op::max ? "max" : "min"; }

// Calls f(T{}) with the element type of d.
template <class F>
decltype(auto) with_dtype(Dtype d, F&& f) {
  switch (d) {
    case Dtype::fp16: return f(fp16{});
    case Dtype::fp32: return f(float{});
    case Dtype::fp64: return f(double{});
    default: return f(int32_t{});
  }
}

}  // namespace sp::coll
