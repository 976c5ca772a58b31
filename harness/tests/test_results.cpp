#include <gtest/gtest.h>

#include <filesystem>

#include "results.hpp"
#include "scaleproof/params.hpp"
#include <unistd.h>

namespace fs = std::filesystem;

static fs::path fresh_dir(const char* tag) {
  fs::path d = fs::temp_directory_path() / (std::string("sp_test_") + tag + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

TEST(Results, UncommittedFolderLeavesNothing) {
  fs::path parent = fresh_dir("abandon");
  {
    sp::ResultsDir d(parent.string(), "run");
    d.write_text("a.txt", "partial");
    EXPECT_FALSE(fs::exists(parent / "run"));
  }  // destroyed before commit, as when a run throws
  EXPECT_TRUE(fs::is_empty(parent));
  fs::remove_all(parent);
}

TEST(Results, CommitRenamesIntoPlaceAndUpdatesLatest) {
  fs::path parent = fresh_dir("commit");
  std::string final_path;
  {
    sp::ResultsDir d(parent.string(), "run");
    d.write_json("x.json", {{"k", 1}});
    final_path = d.commit();
  }
  EXPECT_TRUE(fs::exists(parent / "run" / "x.json"));
  EXPECT_EQ(sp::read_json((parent / "latest" / "x.json").string())["k"], 1);
  sp::ResultsDir again(parent.string(), "run");  // same name: a distinct folder
  EXPECT_NE(again.final_path(), final_path);
  fs::remove_all(parent);
}

TEST(Results, ReadJsonRejectsBadFiles) {
  EXPECT_THROW(sp::read_json("/nonexistent.json"), sp::InputError);
  fs::path p = fs::temp_directory_path() / "sp_bad.json";
  sp::write_file_atomic(p.string(), "{not json");
  EXPECT_THROW(sp::read_json(p.string()), sp::InputError);
  fs::remove(p);
}

TEST(Results, ReadJsonAcceptsGoogleBenchmarkNonFinite) {
  // Google Benchmark prints the cv of an all-zero counter as a bare nan.
  fs::path p = fs::temp_directory_path() / "sp_nan.json";
  sp::write_file_atomic(p.string(), R"({"a": -nan, "b": NaN, "c": inf, "d": -Infinity, "name": "nan_counter", "e": 1.5})");
  auto j = sp::read_json(p.string());
  EXPECT_TRUE(j["a"].is_null());
  EXPECT_TRUE(j["b"].is_null());
  EXPECT_TRUE(j["c"].is_null());
  EXPECT_TRUE(j["d"].is_null());
  EXPECT_EQ(j["name"], "nan_counter");  // strings are untouched
  EXPECT_EQ(j["e"], 1.5);
  fs::remove(p);
}
