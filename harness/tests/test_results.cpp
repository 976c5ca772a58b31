#include <gtest/gtest.h>

#include <filesystem>

#include "results.hpp"
#include "scaleproof/params.hpp"
#include <sys/wait.h>
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
  sp::write_file_atomic(p.string(),
                        "{\"a\": -nan, \"b\": NaN, \"c\": inf, \"d\": -Infinity, \"name\": \"nan_counter\", "
                        "\"e\": 1.5, \"infinity\": 2,\n\"g\":\n\t-INF}");
  auto j = sp::read_json(p.string());
  EXPECT_TRUE(j["a"].is_null());
  EXPECT_TRUE(j["b"].is_null());
  EXPECT_TRUE(j["c"].is_null());
  EXPECT_TRUE(j["d"].is_null());
  EXPECT_EQ(j["name"], "nan_counter");  // strings are untouched
  EXPECT_EQ(j["e"], 1.5);
  EXPECT_EQ(j["infinity"], 2);    // a key, not a value
  EXPECT_TRUE(j["g"].is_null());  // white space before the value, the object's end after it
  fs::remove(p);
}

TEST(Results, TwoRunsWithOneNameBothKeepTheirResults) {
  // Both pick the same free name before either commits.
  fs::path parent = fresh_dir("race");
  sp::ResultsDir a(parent.string(), "run"), b(parent.string(), "run");
  a.write_text("who", "a");
  b.write_text("who", "b");
  const std::string pa = a.commit(), pb = b.commit();
  EXPECT_NE(pa, pb);
  EXPECT_TRUE(fs::exists(fs::path(pa) / "who"));
  EXPECT_TRUE(fs::exists(fs::path(pb) / "who"));
  EXPECT_EQ(fs::read_symlink(parent / "latest"), fs::path(pb).filename());
  fs::remove_all(parent);
}

TEST(Results, LatestThatIsNotOurLinkIsLeftAlone) {
  fs::path parent = fresh_dir("latestfile");
  fs::create_directories(parent);
  sp::write_file_atomic((parent / "latest").string(), "mine\n");
  sp::ResultsDir d(parent.string(), "run");
  d.commit();
  EXPECT_FALSE(fs::is_symlink(parent / "latest"));
  EXPECT_EQ(fs::file_size(parent / "latest"), 5u);
  fs::remove_all(parent);
}

TEST(Results, NameIsOnePathComponent) {
  fs::path parent = fresh_dir("name");
  const std::string escape = "sp-escape-" + std::to_string(getpid());
  for (const std::string bad : {"../" + escape, "/tmp/" + escape, std::string("a/b"), std::string(".."),
                                std::string("."), std::string(".hidden"), std::string("latest")})
    EXPECT_THROW(sp::ResultsDir(parent.string(), bad), sp::InputError) << bad;
  EXPECT_FALSE(fs::exists(parent.parent_path() / escape));
  fs::remove_all(parent);
}

TEST(Results, StaleTemporaryFolderOfAGoneProcessIsRemoved) {
  fs::path parent = fresh_dir("stale");
  fs::create_directories(parent);
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  const fs::path stale = parent / (".run.tmp-" + std::to_string(gone) + "-" + host + "-abcdef");
  const fs::path alive = parent / (".run.tmp-" + std::to_string(getppid()) + "-" + host + "-abcdef");
  fs::create_directories(stale / "sub");
  fs::create_directories(alive);
  sp::ResultsDir d(parent.string(), "run");
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(alive));  // its process still runs
  fs::remove_all(parent);
}

TEST(Results, WrongTypedFieldNamesTheFileAndTheField) {
  fs::path p = fs::temp_directory_path() / ("sp_wrong_type_" + std::to_string(getpid()) + ".json");
  sp::write_file_atomic(p.string(), R"({"rows": [{"passed": "yes"}]})");
  const auto& j = sp::read_json(p.string());
  try {
    (void)j.at("rows").at(0).at("passed").get<bool>();
    FAIL() << "no exception";
  } catch (const nlohmann::json::exception& e) {
    EXPECT_EQ(sp::input_error_from(e), p.string() + ": field /rows/0/passed: type must be boolean, but is string");
  }
  // A value that never came from a file is a fault of the program: no input error.
  nlohmann::json inner = {{"k", "v"}};
  try {
    (void)inner.at("k").get<int>();
  } catch (const nlohmann::json::exception& e) {
    EXPECT_EQ(sp::input_error_from(e), "");
  }
  fs::remove(p);
}
