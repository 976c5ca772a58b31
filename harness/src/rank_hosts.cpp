#include "rank_hosts.hpp"

#include <unistd.h>

#include "scaleproof/comm.hpp"

namespace sp {

std::vector<std::string> rank_hosts() {
  constexpr int kLen = 256;  // HOST_NAME_MAX is 64 on Linux; longer names are cut
  char mine[kLen] = {};
  gethostname(mine, kLen - 1);
  const int p = comm::size();
  if (p == 1) return {mine};
#ifdef SP_HAVE_MPI
  std::vector<char> all(static_cast<size_t>(kLen) * p);
  MPI_Allgather(mine, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, comm::world());
  std::vector<std::string> out;
  for (int r = 0; r < p; ++r) out.emplace_back(all.data() + static_cast<size_t>(r) * kLen);
  return out;
#else
  return {mine};
#endif
}

}  // namespace sp
