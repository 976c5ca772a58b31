#pragma once
// Results folders are written atomically: everything goes into a hidden
// temporary folder beside the destination, which is renamed into place only
// when complete. What must hold:
// - the temporary name is unique (host, pid and a random part) and carries
//   the pid, so a later run on the same host removes the folders of
//   processes that are gone (SIGKILL, power loss);
// - SIGINT and SIGTERM remove the current temporary folder before the
//   process dies of the signal;
// - the final rename never replaces an existing folder: a taken name gets
//   the next free suffix (-2, -3, ...), claimed race-free;
// - `latest` is only ever replaced when it is a symlink of the form this
//   tool writes (a bare folder name); anything else is left as it is and
//   one note line says so.
#include <nlohmann/json.hpp>
#include <string>

namespace sp {

class ResultsDir {
 public:
  // `parent/name` is the final folder; name defaults to a UTC timestamp.
  // Throws InputError when name is not one plain path component or the
  // parent cannot be written.
  ResultsDir(const std::string& parent, const std::string& name = "");
  ~ResultsDir();  // removes the temporary folder if commit() was not reached
  ResultsDir(const ResultsDir&) = delete;
  ResultsDir& operator=(const ResultsDir&) = delete;

  std::string path(const std::string& file) const;  // a file inside the temporary folder
  void write_json(const std::string& file, const nlohmann::json& j) const;
  void write_text(const std::string& file, const std::string& text) const;
  std::string commit();  // rename into place; returns the final path
  // The name the folder will most likely get (the suffix is settled by commit()).
  const std::string& final_path() const { return final_; }

 private:
  std::string parent_, base_, tmp_, final_;
  bool done_ = false;
};

// Throws InputError unless `name` is usable as a results folder name: one
// path component, not empty, not hidden, not `.`/`..`, not `latest`.
void check_folder_name(const std::string& name);
// Throws InputError (naming `option`) unless a file can be created at `path`.
void check_writable_file(const std::string& path, const std::string& option);
// Throws InputError unless `dir` is a folder holding at least one results file.
void require_results_folder(const std::string& dir);

// Writes one file atomically (temp file + rename), for single-file outputs.
void write_file_atomic(const std::string& path, const std::string& content);

// Reads a JSON file; throws InputError if missing or malformed. The
// document is kept for the life of the process, under a root key naming the
// file, so that a later wrong-typed access reports the file and the field
// (input_error_from(), with JSON_DIAGNOSTICS). Bind the result by reference.
const nlohmann::json& read_json(const std::string& path);
// For a json exception raised while reading a document from read_json():
// "FILE: field /a/0/b: <what was wrong>". Empty when the value did not come
// from a file (a fault of the program, not of its input).
std::string input_error_from(const nlohmann::json::exception& e);

}  // namespace sp
