#pragma once
// Temporary results folders removed when SIGINT or SIGTERM ends the process.
// The handler does only async-signal-safe work (raw directory syscalls),
// then lets the signal take its previous course.
#include <string>

namespace sp::temp_cleanup {

void track(const std::string& folder);    // remove this folder if the process is interrupted
void untrack(const std::string& folder);  // it was renamed into place or removed

}  // namespace sp::temp_cleanup
