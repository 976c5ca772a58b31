#pragma once
// Facts about the host the process runs on, read once from the C library.

namespace sp {

// The node's physical memory (infinite if unknown).
double physical_memory_bytes();
// The last-level cache's bytes (the largest data or unified cache the C
// library reports; 32 MiB where it reports none).
double last_level_cache_bytes();

}  // namespace sp
