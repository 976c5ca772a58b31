#pragma once
// oneDNN convolution (the CPU vendor baseline) on caller-owned host memory
// holding NCHW activations and (g)oihw weights; bias and activation as oneDNN
// post-ops, algorithm::convolution_direct (no Winograd: its different
// rounding would not fit the direct-sum error bound the checker uses).
//
// Two layouts:
//   best   oneDNN chooses the activation and weight layouts (format_tag::any),
//          as a framework that keeps activations in the library's layout does.
//          Weights are reordered once at construction; load_src() and
//          store_dst() move the plain tensors in and out, so run() is the
//          primitive alone on memory already in its layout.
//   plain  the descriptors are the plain nchw/oihw tensors themselves (what a
//          caller that does not reorder gets); load_src/store_dst do nothing.
// Only declared when the build has oneDNN (SP_HAVE_ONEDNN).
#include <memory>
#include <string>

#include "kernels/conv/conv_spec.hpp"

namespace sp::conv {

enum class OnednnLayout { best, plain };

class OnednnConv {
 public:
  OnednnConv(const ConvSpec& s, int n, int h, int w, OnednnLayout layout, const float* in, const float* wts,
             const float* bias, float* out);
  ~OnednnConv();
  void load_src();   // the plain input into the primitive's source layout (no-op when it is plain)
  void run();        // the primitive alone
  void store_dst();  // the primitive's destination into the plain output (no-op when it is plain)
  // Reads producer's destination memory directly when its layout is this
  // primitive's source layout (no reorder between the two); false otherwise.
  bool chain_from(const OnednnConv& producer);
  bool dst_is_plain() const;
  // The implementation oneDNN picked and the activation layout, e.g. "jit:avx2 nChw8c".
  std::string impl() const;
  // The same description without memory: the choice depends only on the
  // shapes, the layout mode and the machine's ISA.
  static std::string describe(const ConvSpec& s, int n, int h, int w, OnednnLayout layout);

 private:
  struct Impl;
  std::unique_ptr<Impl> p_;
};

}  // namespace sp::conv
