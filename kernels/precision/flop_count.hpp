#pragma once
// FLOPs a forward issues, counted product by product as it calls the GEMM
// (2 m n k each), for verdicts that compare them with a closed form.
namespace sp::precision {

struct FlopCount {
  double flops = 0;
  void add(int m, int n, int k) { flops += 2.0 * m * n * k; }
};

}  // namespace sp::precision
