#pragma once
// The host heap's policy while the harness measures: memory that a technique
// frees stays with the process (for its next allocation) instead of going
// back to the operating system. A timed call that allocates and frees its
// buffers - a training step's activations, a 16-bit GEMM's fp32 accumulator
// - then measures its arithmetic, not the kernel mapping and zeroing fresh
// pages on every call, as the caching allocators of training frameworks
// keep device and host memory. Set once, before any technique runs; the
// manifest records it (host_heap).
#include <string>

namespace sp {

// Applies the policy and returns its description ("glibc malloc: ...", or
// why the system's default stays where the C library has no such knob).
std::string keep_freed_host_memory();

// The description of the policy in force: what keep_freed_host_memory()
// returned, or "system default" before it ran.
const std::string& host_heap_policy();

}  // namespace sp
