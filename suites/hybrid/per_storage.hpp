#pragma once
// One object per storage type the layers run (fp32, fp64, fp16, bf16) and
// the one a `dtype` parameter names: the techniques that hold buffers of the
// storage type their parameters choose keep all four and call into one.
#include <string>

#include "kernels/precision/float16.hpp"

namespace sp::hybrid {

template <template <class> class H>
struct PerStorage {
  H<float> f32;
  H<double> f64;
  H<precision::fp16_t> f16;
  H<precision::bf16_t> b16;
  // f(the object of `dtype`), which must be one of the four names.
  template <class F>
  decltype(auto) with(const std::string& dtype, F&& f) {
    if (dtype == "fp64") return f(f64);
    if (dtype == "fp16") return f(f16);
    if (dtype == "bf16") return f(b16);
    return f(f32);
  }
  void clear() { f32.clear(), f64.clear(), f16.clear(), b16.clear(); }
};

}  // namespace sp::hybrid
