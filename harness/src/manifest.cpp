#include "manifest.hpp"

#include <unistd.h>

#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "host_heap.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/kokkos_compat.hpp"
#include "scaleproof/vendors.hpp"
#include "sp_build_commit.hpp"

#ifdef SP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#ifdef SP_HAVE_NCCL
#include <nccl.h>
#endif
#ifdef SP_HAVE_CUBLAS
#include <cublas_api.h>
#endif
#ifdef SP_HAVE_CUDNN
#include <cudnn.h>
#endif

namespace sp {

namespace {

std::string shell(const std::string& cmd) {
  std::array<char, 512> buf{};
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  while (fgets(buf.data(), buf.size(), p)) out += buf.data();
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

// The commit of the source tree the binary was built from, as it is now
// ("" when it has no .git of its own, e.g. a copy from ci/bundle.sh, which
// must not report the commit of a repository it happens to lie in).
std::string source_tree_commit() {
  if (access(SP_SOURCE_DIR "/.git", F_OK) != 0) return "";
  std::string c = shell("git -C '" SP_SOURCE_DIR "' rev-parse HEAD 2>/dev/null");
  if (c.size() != 40) return "";
  if (!shell("git -C '" SP_SOURCE_DIR "' status --porcelain --untracked-files=no 2>/dev/null").empty()) c += "-dirty";
  return c;
}

#ifdef SP_HAVE_CUDA
// The kernel driver's version as the driver itself reports it (the CUDA
// runtime reports only the CUDA version the driver supports): the first
// dotted number after "Kernel Module", whatever words stand between (the open
// module reads "Kernel Module for x86_64  580.159.04").
std::string gpu_driver() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(f, line)) return "none";
  const auto k = line.find("Kernel Module");
  if (k == std::string::npos) return line;
  std::istringstream words(line.substr(k + 13));
  for (std::string w; words >> w;)
    if (std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos) return w;
  return line;
}
#endif

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

namespace {

// This rank's index among the ranks sharing its node, and their number.
void node_position(int* rank, int* size) {
  *rank = 0, *size = 1;
#ifdef SP_HAVE_MPI
  // One rank in all is alone on its node; asking MPI would start it in a
  // process that no launcher started (comm::world()).
  if (comm::size() == 1) return;
  MPI_Comm node;
  MPI_Comm_split_type(comm::world(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, rank);
  MPI_Comm_size(node, size);
  MPI_Comm_free(&node);
#endif
}

}  // namespace

int local_ranks() {
  int r = 0, n = 1;
  node_position(&r, &n);
  return n;
}

int local_rank() {
  int r = 0, n = 1;
  node_position(&r, &n);
  return r;
}

bool oversubscribed(int ranks_on_node, int threads, int* cores_out) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (cores_out) *cores_out = cores;
  return cores > 0 && ranks_on_node * threads > cores;
}

nlohmann::json collect_manifest(const RunContext& ctx) {
  nlohmann::json m;
  // The commit the binary was built from; where the source tree has moved
  // on since (a stale or copied binary), the tree's commit beside it.
  m["git_commit"] = SP_BUILD_COMMIT;
  const std::string tree = source_tree_commit();
  if (!tree.empty() && tree != SP_BUILD_COMMIT) m["source_tree_commit"] = tree;
  m["compiler"] = SP_CXX_COMPILER;
  m["compiler_flags"] = SP_CXX_FLAGS;
  m["build_type"] = SP_BUILD_TYPE;
  m["kokkos_version"] = kx::version_string();
  m["kokkos_backends"] = kx::backends_string();
  m["threads_per_rank"] = ctx.threads;
  m["host_heap"] = host_heap_policy();
  m["ranks"] = ctx.ranks;
  const int local = local_ranks();
  int cores = 0;
  m["oversubscribed"] = oversubscribed(local, ctx.threads, &cores);
  m["ranks_per_node"] = local;
  m["cores"] = cores;
  m["cpu_model"] = cpu_model();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  m["hostname"] = host;
  m["mpi"] = comm::library_version();
#ifdef SP_HAVE_CUDA
  int rt = 0;
  cudaRuntimeGetVersion(&rt);
  m["cuda_runtime"] = std::to_string(rt / 1000) + "." + std::to_string(rt % 1000 / 10);
  int drv = 0;
  // 0 when no driver is loaded (a machine without a GPU).
  m["cuda_driver_api"] = cudaDriverGetVersion(&drv) == cudaSuccess && drv > 0
                             ? std::to_string(drv / 1000) + "." + std::to_string(drv % 1000 / 10)
                             : "no driver";
  m["gpu_driver"] = gpu_driver();
  cudaDeviceProp prop{};
  int dev = 0;
  if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess) {
    m["gpu"] = prop.name;
    m["gpu_compute_capability"] = std::to_string(prop.major) + "." + std::to_string(prop.minor);
    m["gpu_memory_bytes"] = static_cast<double>(prop.totalGlobalMem);
    m["gpu_multiprocessors"] = prop.multiProcessorCount;
  } else {
    m["gpu"] = "none visible";
  }
  int count = 0;
  m["gpus_visible"] = cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
#else
  m["cuda_runtime"] = "not built";
  m["gpu"] = "not used";
#endif
#ifdef SP_HAVE_CUBLAS
  int bmaj = 0, bmin = 0, bpat = 0;
  cublasGetProperty(MAJOR_VERSION, &bmaj);
  cublasGetProperty(MINOR_VERSION, &bmin);
  cublasGetProperty(PATCH_LEVEL, &bpat);
  m["cublas"] = std::to_string(bmaj) + "." + std::to_string(bmin) + "." + std::to_string(bpat);
#else
  m["cublas"] = "not built";
#endif
#ifdef SP_HAVE_CUDNN
  // cuDNN 9 encodes major*10000 + minor*100 + patch.
  const size_t dn = cudnnGetVersion();
  m["cudnn"] = std::to_string(dn / 10000) + "." + std::to_string(dn / 100 % 100) + "." + std::to_string(dn % 100);
#else
  m["cudnn"] = "not built";
#endif
#ifdef SP_HAVE_NCCL
  int nv = 0;
  ncclGetVersion(&nv);
  m["nccl"] = std::to_string(nv / 10000) + "." + std::to_string(nv / 100 % 100) + "." + std::to_string(nv % 100);
#else
  m["nccl"] = "not built";
#endif
  // Each vendor baseline, set to this run's threads per rank, and what it runs.
  m["vendors"] = nlohmann::json::object();
  for (auto& [name, hook] : vendors())
    for (auto& [k, v] : hook(ctx.threads)) m["vendors"][name][k] = v;
  m["date"] = utc_now();
  m["command_line"] = ctx.command_line;
  return m;
}

}  // namespace sp
