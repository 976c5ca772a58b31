#pragma once
// Activation checkpointing (Chen et al. 2016; docs/precision.md "Activation
// checkpointing") on a stack of n blocks, each of s sublayers
// x_{l+1} = relu(x_l W_l) (a transformer layer has 5 linear inputs).
// keep-all stores every x_l for backward. Checkpointing every k blocks
// stores only the input of each k-block segment; backward walks the
// segments last to first, recomputes the segment's activations from its
// checkpoint, then back-propagates through it. Recomputation runs the same
// kernels on the same inputs, so the gradients are bitwise those of keep-all.
// Every activation buffer is taken from an ActivationTracker, which counts
// live buffers and bytes and records their peak: the measured memory.
#include <Kokkos_Core.hpp>
#include <vector>

#include "kernels/nn/activations.hpp"
#include "kernels/nn/linear.hpp"

namespace sp::precision {

class ActivationTracker {
 public:
  explicit ActivationTracker(size_t elems) : elems_(elems) {}
  Kokkos::View<float*> acquire() {
    ++live_;
    peak_ = live_ > peak_ ? live_ : peak_;
    return Kokkos::View<float*>(Kokkos::view_alloc("activation", Kokkos::WithoutInitializing), elems_);
  }
  void release(Kokkos::View<float*>& v) {
    if (v.data() == nullptr) return;
    v = {};
    --live_;
  }
  long long live() const { return live_; }
  long long peak() const { return peak_; }
  double bytes_per_buffer() const { return double(elems_) * sizeof(float); }

 private:
  size_t elems_;
  long long live_ = 0, peak_ = 0;
};

struct StackShape {
  int blocks, sub, batch, width;  // n, s, B, W
  int layers() const { return blocks * sub; }
};

class BlockStack {
 public:
  // w: layers() matrices of width x width; x0: batch x width; dout: the loss
  // gradient with respect to the output (a fixed linear loss sum(out * dout)).
  BlockStack(StackShape sh, const std::vector<float>& w, const std::vector<float>& x0, const std::vector<float>& dout);

  // One forward + backward. every_k = 0: keep all activations; otherwise
  // checkpoint the input of every every_k-th block. Fills grads().
  void train_step(int every_k);
  // Forward only (no storage beyond the running activation): the unit the
  // recomputation cost is predicted in.
  void forward_only();

  const std::vector<Kokkos::View<float*>>& grads() const { return dW_; }
  long long peak_buffers() const { return peak_; }
  long long stored_after_forward() const { return stored_; }  // excluding the output
  double bytes_per_buffer() const { return double(sh_.batch) * sh_.width * sizeof(float); }

  // Public: nvcc refuses device lambdas in private member functions.
  void layer_forward(int l, const Kokkos::View<float*>& in, const Kokkos::View<float*>& out);
  // dx_in <- gradient w.r.t. layer l's input; dW_[l] <- weight gradient.
  void layer_backward(int l, const Kokkos::View<float*>& in, const Kokkos::View<float*>& out);

 private:
  StackShape sh_;
  std::vector<Kokkos::View<float*>> W_, dW_;
  Kokkos::View<float*> x0_, dout_, dx_, dz_;
  long long peak_ = 0, stored_ = 0;
};

}  // namespace sp::precision
