#pragma once
// A buffer of T in the default memory space whose bytes are counted in a
// MemoryTracker category for exactly as long as it lives: the "measured"
// side of the step's memory verdicts counts these objects, not a formula.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <string>

#include "kernels/dataparallel/memory_tracker.hpp"

namespace sp::hybrid {

using dp::Mem;
using dp::MemoryTracker;

template <class T>
class Tracked {
 public:
  Tracked() = default;
  // zero: filled with zeros (what accumulating gradients need); otherwise
  // left uninitialised (activations and messages are written before read).
  Tracked(MemoryTracker& mem, Mem cat, size_t n, const std::string& label, bool zero = true)
      : v_(zero ? Kokkos::View<T*>(label, n)
                : Kokkos::View<T*>(Kokkos::view_alloc(label, Kokkos::WithoutInitializing), n)),
        mem_(&mem),
        cat_(cat) {
    mem_->add(cat_, bytes());
  }
  ~Tracked() { release(); }
  Tracked(Tracked&& o) noexcept : v_(o.v_), mem_(o.mem_), cat_(o.cat_) { o.mem_ = nullptr, o.v_ = {}; }
  Tracked& operator=(Tracked&& o) noexcept {
    if (this != &o) {
      release();
      v_ = o.v_, mem_ = o.mem_, cat_ = o.cat_;
      o.mem_ = nullptr, o.v_ = {};
    }
    return *this;
  }
  Tracked(const Tracked&) = delete;
  Tracked& operator=(const Tracked&) = delete;

  T* data() const { return v_.data(); }
  size_t size() const { return v_.size(); }
  double bytes() const { return double(v_.size()) * sizeof(T); }
  const Kokkos::View<T*>& view() const { return v_; }
  void release() {
    if (mem_) mem_->sub(cat_, bytes());
    mem_ = nullptr, v_ = {};
  }

 private:
  Kokkos::View<T*> v_;
  MemoryTracker* mem_ = nullptr;
  Mem cat_ = Mem::activations;
};

}  // namespace sp::hybrid
