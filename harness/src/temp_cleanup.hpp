#pragma once
// Temporary results folders removed when SIGINT or SIGTERM ends the process.
// The handler does only async-signal-safe work (raw directory syscalls),
// then lets the signal take its previous course.
#include <string>

namespace sp::temp_cleanup {

void track(const std::string& folder);    // remove this folder if the process is interrupted
void untrack(const std::string& folder);  // it was renamed into place or removed

// "<prefix><pid>-<host>-": the start of a temporary name this process owns
// (complete it with 6 characters, e.g. mkdtemp's XXXXXX). The pid says whose
// it is; the host keeps a run on another node of a shared filesystem from
// judging it.
std::string owned_prefix(const std::string& prefix);
// Removes the entries of `parent` named <prefix_regex><pid>-<host>-<6 chars>
// whose process, on this host, is gone (a run killed with SIGKILL cannot
// clean up after itself; the next run does).
void remove_stale(const std::string& parent, const std::string& prefix_regex);

}  // namespace sp::temp_cleanup
