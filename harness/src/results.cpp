#include "results.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <list>
#include <mutex>
#include <set>
#include <stdexcept>

#include "scaleproof/params.hpp"
#include "temp_cleanup.hpp"

namespace fs = std::filesystem;

namespace sp {

namespace {

// Google Benchmark writes bare nan/-nan/inf (e.g. the coefficient of
// variation of a counter that is zero), which JSON does not allow: each
// value that is [-](nan|inf|infinity) in any case, after a ':' and optional
// white space, and followed by a character that cannot continue a word,
// becomes null. One pass over the text (a results file can hold tens of MB).
void null_non_finite(std::string& text) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  auto at = [&](size_t i, const char* w) {  // w (lower case) at i, in any case, ending a word
    size_t n = std::strlen(w);
    if (i + n > text.size()) return size_t(0);
    for (size_t k = 0; k < n; ++k)
      if (std::tolower(static_cast<unsigned char>(text[i + k])) != w[k]) return size_t(0);
    return i + n < text.size() && word(text[i + n]) ? size_t(0) : n;
  };
  std::string out;
  size_t copied = 0;
  for (size_t colon = text.find(':'); colon != std::string::npos; colon = text.find(':', colon + 1)) {
    size_t v = colon + 1;
    while (v < text.size() && std::isspace(static_cast<unsigned char>(text[v]))) ++v;
    const size_t sign = v < text.size() && text[v] == '-' ? 1 : 0;
    size_t n = 0;
    for (const char* w : {"infinity", "inf", "nan"})
      if ((n = at(v + sign, w)) > 0) break;
    if (n == 0) continue;
    out.append(text, copied, v - copied).append("null");
    copied = v + sign + n;
  }
  if (copied == 0) return;
  out.append(text, copied, std::string::npos);
  text.swap(out);
}

std::string timestamp() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::gmtime(&t));
  return buf;
}

// ".<what>.tmp-<pid>-<host>-<6 chars>": see temp_cleanup::owned_prefix.
std::string temp_prefix(const std::string& what) { return temp_cleanup::owned_prefix("." + what + ".tmp-"); }

// Removes temporary entries (folders or links) of processes on this host that are gone.
void remove_stale_temps(const fs::path& parent) { temp_cleanup::remove_stale(parent.string(), R"(\..*\.tmp-)"); }

// Moves `from` to `to` unless `to` exists. False when `to` is taken.
bool rename_no_replace(const std::string& from, const std::string& to) {
  if (renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno == EEXIST) return false;
  if (errno != EINVAL && errno != ENOSYS)
    throw std::runtime_error("cannot rename " + from + " to " + to + ": " + std::strerror(errno));
  // A filesystem without RENAME_NOREPLACE: claim the name with an exclusive
  // mkdir, then replace the empty folder this process owns.
  if (mkdir(to.c_str(), 0700) != 0) {
    if (errno == EEXIST) return false;
    throw std::runtime_error("cannot create " + to + ": " + std::strerror(errno));
  }
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    const int err = errno;
    rmdir(to.c_str());
    throw std::runtime_error("cannot rename " + from + " to " + to + ": " + std::strerror(err));
  }
  return true;
}

// Points parent/latest at `target` if latest is absent or a link this tool wrote.
void update_latest(const fs::path& parent, const std::string& target) {
  const fs::path latest = parent / "latest";
  std::error_code ec;
  const auto st = fs::symlink_status(latest, ec);
  if (fs::exists(st)) {
    const bool ours = fs::is_symlink(st) && [&] {
      const fs::path to = fs::read_symlink(latest, ec);
      return !ec && !to.has_parent_path() && !to.empty();
    }();
    if (!ours) {
      std::printf("note: %s is not a link written by scaleproof; left as it is\n", latest.c_str());
      return;
    }
  }
  const fs::path tmp_link = parent / (temp_prefix("latest") + "link00");
  fs::remove(tmp_link, ec);
  fs::create_directory_symlink(target, tmp_link, ec);
  if (!ec) fs::rename(tmp_link, latest, ec);
  if (ec) fs::remove(tmp_link, ec);
}

// The documents read_json() returned, each under a root key naming its file.
struct DocumentStore {
  std::mutex mutex;
  std::list<nlohmann::json> documents;  // stable addresses: callers hold references
  std::set<std::string> paths;
};
DocumentStore& store() {
  static DocumentStore s;
  return s;
}

}  // namespace

void check_folder_name(const std::string& name) {
  if (name.empty()) throw InputError("--name: empty folder name");
  if (name.find('/') != std::string::npos || name == "." || name == "..")
    throw InputError("--name '" + name + "': must be one folder name, without '/'");
  if (name[0] == '.')
    throw InputError("--name '" + name + "': a name starting with '.' is reserved for temporary folders");
  if (name == "latest") throw InputError("--name latest: reserved for the link to the newest run");
}

void check_writable_file(const std::string& path, const std::string& option) {
  if (path.empty()) throw InputError(option + ": empty file name");
  const fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw InputError(option + " " + path + ": is a folder");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) throw InputError(option + " " + path + ": no folder " + dir.string());
  if (access(dir.c_str(), W_OK) != 0)
    throw InputError(option + " " + path + ": folder " + dir.string() + " is not writable");
}

void require_results_folder(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError("no results folder at " + dir);
  for (const char* f :
       {"manifest.json", "check.json", "bench.json", "verdicts.json", "sweep.json", "qualification.json"})
    if (fs::exists(fs::path(dir) / f, ec)) return;
  throw InputError(dir + " holds no results (no manifest.json, check.json, bench.json, verdicts.json or sweep.json)");
}

ResultsDir::ResultsDir(const std::string& parent, const std::string& name) : parent_(parent) {
  if (!name.empty()) check_folder_name(name);
  if (parent.empty()) throw InputError("--out: empty folder name");
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec || !fs::is_directory(parent))
    throw InputError("--out " + parent + ": cannot create the folder (" + (ec ? ec.message() : "not a folder") + ")");
  if (access(parent.c_str(), W_OK) != 0) throw InputError("--out " + parent + ": the folder is not writable");
  remove_stale_temps(parent);
  base_ = name.empty() ? timestamp() : name;
  final_ = (fs::path(parent) / base_).string();
  for (int i = 2; fs::exists(fs::symlink_status(final_, ec)); ++i)
    final_ = (fs::path(parent) / (base_ + "-" + std::to_string(i))).string();
  std::string templ = (fs::path(parent) / (temp_prefix(base_) + "XXXXXX")).string();
  if (!mkdtemp(templ.data()))
    throw InputError("--out " + parent + ": cannot create a folder there (" + std::strerror(errno) + ")");
  tmp_ = templ;
  const mode_t mask = umask(0);
  umask(mask);
  chmod(tmp_.c_str(), 0777 & ~mask);  // mkdtemp makes it private; results are as readable as any folder
  temp_cleanup::track(tmp_);
}

ResultsDir::~ResultsDir() {
  if (!done_) {
    temp_cleanup::untrack(tmp_);
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }
}

std::string ResultsDir::path(const std::string& file) const { return (fs::path(tmp_) / file).string(); }

void ResultsDir::write_json(const std::string& file, const nlohmann::json& j) const {
  write_text(file, j.dump(2) + "\n");
}

void ResultsDir::write_text(const std::string& file, const std::string& text) const {
  std::ofstream f(path(file));
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path(file));
}

std::string ResultsDir::commit() {
  std::string target = final_;
  for (int i = 2; !rename_no_replace(tmp_, target); ++i)
    target = (fs::path(parent_) / (base_ + "-" + std::to_string(i))).string();
  done_ = true;
  temp_cleanup::untrack(tmp_);
  if (target != final_) std::printf("note: %s was taken meanwhile; this run is %s\n", final_.c_str(), target.c_str());
  final_ = target;
  update_latest(fs::path(final_).parent_path(), fs::path(final_).filename().string());
  return final_;
}

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream f(tmp);
    f << content;
    if (!f) throw std::runtime_error("cannot write " + tmp);
  }
  fs::rename(tmp, path);
}

const nlohmann::json& read_json(const std::string& path) {
  std::ifstream f(path);
  if (!f || fs::is_directory(path)) throw InputError("cannot read " + path);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  null_non_finite(text);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw InputError(path + " is not valid JSON");
  }
  auto& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.paths.insert(path);
  s.documents.push_back(nlohmann::json::object({{path, std::move(doc)}}));
  return s.documents.back()[path];
}

std::string input_error_from(const nlohmann::json::exception& e) {
  // With JSON_DIAGNOSTICS the message is "[json.exception.<kind>] (/<file>/<field...>) <what>",
  // the file being the root key read_json() stored the document under.
  const std::string what = e.what();
  const auto open = what.find("] (/");
  if (open == std::string::npos) return "";
  const auto close = what.find(") ", open);
  if (close == std::string::npos) return "";
  const std::string pointer = what.substr(open + 3, close - open - 3);
  const auto second = pointer.find('/', 1);
  auto unescape = [](std::string s) {
    for (size_t p; (p = s.find("~1")) != std::string::npos;) s.replace(p, 2, "/");
    for (size_t p; (p = s.find("~0")) != std::string::npos;) s.replace(p, 2, "~");
    return s;
  };
  const std::string file = unescape(pointer.substr(1, second == std::string::npos ? std::string::npos : second - 1));
  {
    auto& s = store();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.paths.count(file)) return "";
  }
  const std::string field = second == std::string::npos ? "(the document)" : pointer.substr(second);
  return file + ": field " + field + ": " + what.substr(close + 2);
}

}  // namespace sp
