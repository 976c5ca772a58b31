#pragma once
// Reference STREAM: the same four operations as plain loops in long double,
// from the initial inputs. Returns the expected output array and, for each
// element, the magnitude the rounding bound scales with.
#include <cstddef>
#include <vector>

namespace sp::reference {

struct StreamExpected {
  std::vector<long double> value;  // exact (to long double) result
  std::vector<long double> scale;  // sum of |terms|: an n-term sum of products errs by <= gamma_n * scale
  int rounding_steps;              // operations that round in the kernel's precision
};

// op: 0 copy (c = a), 1 scale (b = q c), 2 add (c = a + b), 3 triad (a = b + q c)
template <class T>
StreamExpected stream_ref(int op, const std::vector<T>& a, const std::vector<T>& b, const std::vector<T>& c, T q) {
  StreamExpected e;
  const size_t n = a.size();
  e.value.resize(n);
  e.scale.resize(n);
  for (size_t i = 0; i < n; ++i) {
    long double A = a[i], B = b[i], C = c[i], Q = q;
    if (op == 0) {
      e.value[i] = A;
      e.scale[i] = A < 0 ? -A : A;
    }
    if (op == 1) {
      e.value[i] = Q * C;
      e.scale[i] = Q * C < 0 ? -(Q * C) : Q * C;
    }
    if (op == 2) {
      e.value[i] = A + B;
      e.scale[i] = (A < 0 ? -A : A) + (B < 0 ? -B : B);
    }
    if (op == 3) {
      e.value[i] = B + Q * C;
      e.scale[i] = (B < 0 ? -B : B) + (Q * C < 0 ? -(Q * C) : Q * C);
    }
  }
  e.rounding_steps = op == 0 ? 0 : op == 3 ? 2 : 1;
  return e;
}

}  // namespace sp::reference
