// Sets the variables vendor libraries read when they are loaded, then starts
// the process again (vendor_env.hpp).
#include "vendor_env.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "scaleproof/vendors.hpp"

namespace sp {

void restart_with_vendor_environment(char** argv) {
  if (std::getenv(kVendorEnvMark)) return;
  std::string mark;
  for (auto& hook : vendor_env_hooks())
    for (const VendorEnv& e : hook()) {
      if (std::getenv(e.var.c_str())) continue;  // the user's (or an earlier hook's) value stands
      setenv(e.var.c_str(), e.value.c_str(), 0);
      mark += (mark.empty() ? "" : "; ") + e.var + "=" + e.value + ": " + e.why;
    }
  if (mark.empty()) return;
  setenv(kVendorEnvMark, mark.c_str(), 1);
  execv("/proc/self/exe", argv);
}

}  // namespace sp
