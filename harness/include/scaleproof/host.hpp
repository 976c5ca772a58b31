#pragma once
// Facts about the host the process runs on, read once from the C library.

namespace sp {

// The node's physical memory (infinite if unknown).
double physical_memory_bytes();
// The largest data or unified cache the C library reports, in bytes; 0
// where it reports none (for a rule that must not guess, e.g. STREAM's).
double reported_last_level_cache_bytes();
// The same, or 32 MiB where none is reported (for sizing: a kernel's
// blocking, a benchmark's working set).
double last_level_cache_bytes();

}  // namespace sp
