#include "temp_cleanup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <regex>

namespace sp::temp_cleanup {

namespace {

constexpr int kSlots = 4;
constexpr int kPathMax = 4096;
// A slot is in use when its first byte is non-zero; written before `active`
// is raised and cleared after it is lowered, so the handler never reads a
// half-written path.
char g_paths[kSlots][kPathMax];
volatile sig_atomic_t g_active[kSlots];
struct sigaction g_old_int, g_old_term;
std::once_flag g_installed;
std::mutex g_mutex;

struct Dirent64 {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

// Removes parent_fd/name and everything below it with syscalls only.
void remove_tree_at(int parent_fd, const char* name, int depth) {
  const int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && depth < 16) {
    alignas(8) char buf[4096];
    // Entries are removed while listing: list again from the start until empty.
    for (int pass = 0; pass < 64; ++pass) {
      lseek(fd, 0, SEEK_SET);
      const long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      bool removed = false;
      for (long off = 0; off < n;) {
        auto* d = reinterpret_cast<Dirent64*>(buf + off);
        off += d->reclen;
        if (!std::strcmp(d->name, ".") || !std::strcmp(d->name, "..")) continue;
        if (d->type == DT_DIR)
          remove_tree_at(fd, d->name, depth + 1);
        else
          unlinkat(fd, d->name, 0);
        removed = true;
      }
      if (!removed) break;
    }
  }
  if (fd >= 0) close(fd);
  unlinkat(parent_fd, name, AT_REMOVEDIR);
}

void on_signal(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_active[i]) remove_tree_at(AT_FDCWD, g_paths[i], 0);
  // The previous disposition takes over: the signal, pending until this
  // handler returns, then ends the process as it would have without it.
  sigaction(sig, sig == SIGINT ? &g_old_int : &g_old_term, nullptr);
  raise(sig);
}

void install() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  // A signal ignored by the parent (e.g. nohup) stays ignored.
  sigaction(SIGINT, nullptr, &g_old_int);
  sigaction(SIGTERM, nullptr, &g_old_term);
  if (g_old_int.sa_handler != SIG_IGN) sigaction(SIGINT, &sa, nullptr);
  if (g_old_term.sa_handler != SIG_IGN) sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace

void track(const std::string& folder) {
  std::call_once(g_installed, install);
  if (folder.empty() || folder.size() >= kPathMax) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  for (int i = 0; i < kSlots; ++i)
    if (!g_active[i]) {
      std::memcpy(g_paths[i], folder.c_str(), folder.size() + 1);
      g_active[i] = 1;
      return;
    }
}

void untrack(const std::string& folder) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (int i = 0; i < kSlots; ++i)
    if (g_active[i] && folder == g_paths[i]) g_active[i] = 0;
}

namespace {

std::string hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "host";
  std::string h = buf;
  for (char& ch : h)
    if (ch == '/' || ch == '.') ch = '_';
  return h;
}

}  // namespace

std::string owned_prefix(const std::string& prefix) {
  return prefix + std::to_string(getpid()) + "-" + hostname() + "-";
}

void remove_stale(const std::string& parent, const std::string& prefix_regex) {
  namespace fs = std::filesystem;
  const std::regex pattern("^" + prefix_regex + R"(([0-9]+)-(.+)-[A-Za-z0-9]{6}$)");
  const std::string host = hostname();
  std::error_code ec;
  for (auto it = fs::directory_iterator(parent, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, pattern) || m[2] != host) continue;
    const long pid = std::strtol(m[1].str().c_str(), nullptr, 10);
    if (pid <= 0 || pid == getpid()) continue;
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    std::error_code rm;
    fs::remove_all(it->path(), rm);
  }
}

}  // namespace sp::temp_cleanup
