#include "results.hpp"

#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>

#include "scaleproof/params.hpp"

namespace fs = std::filesystem;

namespace sp {

static std::string timestamp() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::gmtime(&t));
  return buf;
}

ResultsDir::ResultsDir(const std::string& parent, const std::string& name) {
  fs::create_directories(parent);
  std::string base = name.empty() ? timestamp() : name;
  final_ = (fs::path(parent) / base).string();
  // Two runs in the same second get distinct folders.
  for (int i = 2; fs::exists(final_); ++i) final_ = (fs::path(parent) / (base + "-" + std::to_string(i))).string();
  tmp_ = (fs::path(parent) / ("." + fs::path(final_).filename().string() + ".tmp-" + std::to_string(getpid()))).string();
  fs::create_directories(tmp_);
}

ResultsDir::~ResultsDir() {
  if (!done_) {
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
  fs::rename(tmp_, final_);
  done_ = true;
  // results/latest always names the newest complete run (relative link, replaced atomically).
  const fs::path parent = fs::path(final_).parent_path();
  const fs::path tmp_link = parent / (".latest.tmp-" + std::to_string(getpid()));
  std::error_code ec;
  fs::remove(tmp_link, ec);
  fs::create_directory_symlink(fs::path(final_).filename(), tmp_link, ec);
  if (!ec) fs::rename(tmp_link, parent / "latest", ec);
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

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw InputError("cannot read " + path);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // Google Benchmark writes bare NaN/Infinity (e.g. the coefficient of
  // variation of a counter that is zero), which JSON does not allow.
  static const std::regex non_finite(R"((:\s*)-?(NaN|Infinity)\b)");
  text = std::regex_replace(text, non_finite, "$1null");
  try {
    return nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw InputError(path + " is not valid JSON");
  }
}

}  // namespace sp
