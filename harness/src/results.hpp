#pragma once
// Results folders are written atomically: everything goes into a hidden
// temporary folder beside the destination, which is renamed into place only
// when complete. A failed or interrupted run leaves no half-written folder.
#include <nlohmann/json.hpp>
#include <string>

namespace sp {

class ResultsDir {
 public:
  // `parent/name` is the final folder; name defaults to a UTC timestamp.
  ResultsDir(const std::string& parent, const std::string& name = "");
  ~ResultsDir();  // removes the temporary folder if commit() was not reached
  ResultsDir(const ResultsDir&) = delete;
  ResultsDir& operator=(const ResultsDir&) = delete;

  std::string path(const std::string& file) const;  // a file inside the temporary folder
  void write_json(const std::string& file, const nlohmann::json& j) const;
  void write_text(const std::string& file, const std::string& text) const;
  std::string commit();  // rename into place; returns the final path
  const std::string& final_path() const { return final_; }

 private:
  std::string tmp_, final_;
  bool done_ = false;
};

// Writes one file atomically (temp file + rename), for single-file outputs.
void write_file_atomic(const std::string& path, const std::string& content);
nlohmann::json read_json(const std::string& path);  // throws InputError if missing or malformed

}  // namespace sp
