#pragma once
// The environment vendor libraries must find when they are loaded
// (scaleproof/vendors.hpp, VendorEnv): set, then the process starts again.

namespace sp {

// Called first in main(), before MPI, Kokkos or any thread starts: when a
// registered hook asks for a variable that is not set, sets every such
// variable and the mark (kVendorEnvMark), and replaces this process with a new
// start of the same binary and arguments (execv). Returns when the mark is
// already there, when nothing is missing, or when the restart fails (the run
// then goes on with the libraries as loaded; the manifest's vendor facts say
// what ran).
void restart_with_vendor_environment(char** argv);

}  // namespace sp
