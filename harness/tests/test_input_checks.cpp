// Hostile inputs caught by the one validation path: parameter schema,
// selection contradictions, thread counts, and the regression gate's threshold.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

#include "cli_checks.hpp"
#include "results_compare.hpp"
#include "scaleproof/kokkos_compat.hpp"
#include "scaleproof/registry.hpp"
#include "selection.hpp"

using sp::Filter;
using sp::InputError;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(InputChecks, GemmSizesWhoseProductWrapsAreRefused) {
  // 2^32 cubed wraps int64 to 0: it must not reach the allocation.
  Filter f{{}, {"gemm"}, {sp::Size::conformance}, {"M=4294967296,N=4294967296,K=4294967296"}, {}};
  EXPECT_THROW(sp::select_cases(f, 1), InputError);
  // Each input fits the 2^31 guard; the M x N output does not.
  f.sets = {"M=65536,N=65536,K=1"};
  EXPECT_NE(error_of([&] { sp::select_cases(f, 1); }).find("M x N"), std::string::npos);
}

TEST(InputChecks, ParameterValuesAgainstTheSchema) {
  const auto& info = sp::Registry::get().find("stream_copy")->info;
  for (const char* bad : {"nan", "inf", "-inf", "1e400", "0", "-3", "2.5", "abc", "", "99999999999999999999"})
    EXPECT_THROW(sp::check_param_value(info, "N", bad), InputError) << bad;
  EXPECT_NO_THROW(sp::check_param_value(info, "N", "1024"));
  // A declared rule widens the default range: inplace may be 0.
  const auto& ar = sp::Registry::get().find("all_reduce")->info;
  EXPECT_NO_THROW(sp::check_param_value(ar, "inplace", "0"));
  EXPECT_THROW(sp::check_param_value(ar, "inplace", "2"), InputError);
  // Messages print large values readably.
  EXPECT_NE(error_of([&] { sp::check_param_value(info, "N", "99999999999999999999"); }).find("1e+20"),
            std::string::npos);
}

TEST(InputChecks, DuplicateSetKeysAreErrors) {
  Filter f{{}, {"gemm"}, {sp::Size::conformance}, {"M=3", "M=4"}, {}};
  EXPECT_NE(error_of([&] { sp::select_cases(f, 1); }).find("M given twice"), std::string::npos);
  f.sets = {"M=3,M=3"};
  EXPECT_THROW(sp::select_cases(f, 1), InputError);
}

TEST(InputChecks, TechniqueOutsideTheNamedFamilyIsAnError) {
  EXPECT_THROW(sp::select_cases(Filter{{"gemm"}, {"stream_copy"}, {sp::Size::conformance}, {}, {}}, 1), InputError);
  EXPECT_NO_THROW(sp::select_cases(Filter{{"roofline"}, {"stream_copy"}, {sp::Size::conformance}, {}, {}}, 1));
}

TEST(InputChecks, CaseAboveTheMachinesMemoryIsRefused) {
  Filter f{{}, {"stream_copy"}, {sp::Size::conformance}, {"N=1000000000000"}, {}};  // 16 TB
  EXPECT_NE(error_of([&] { sp::select_cases(f, 1); }).find("per rank"), std::string::npos);
}

TEST(InputChecks, ThreadCountsAboveTheRuntimeAreRefused) {
  const int max = sp::kx::max_host_threads();
  EXPECT_THROW(sp::cli::resolve_threads(max + 1, 1), InputError);
  EXPECT_EQ(sp::cli::resolve_threads(max, 1), max);
  const char* old = std::getenv("OMP_NUM_THREADS");
  const std::string saved = old ? old : "";
  setenv("OMP_NUM_THREADS", "600", 1);
  EXPECT_THROW(sp::cli::resolve_threads(0, 1), InputError);
  setenv("OMP_NUM_THREADS", "abc", 1);
  EXPECT_THROW(sp::cli::resolve_threads(0, 1), InputError);
  setenv("OMP_NUM_THREADS", "2,1", 1);
  EXPECT_EQ(sp::cli::resolve_threads(0, 1), 2);
  if (old)
    setenv("OMP_NUM_THREADS", saved.c_str(), 1);
  else
    unsetenv("OMP_NUM_THREADS");
}

TEST(InputChecks, NanThresholdCannotSwitchTheGateOff) {
  const std::map<std::string, double> a{{"x", 1.0}}, b{{"x", 10.0}};
  EXPECT_THROW(sp::compare_timings(a, b, NAN), InputError);
  EXPECT_THROW(sp::compare_timings(a, b, INFINITY), InputError);
  EXPECT_EQ(sp::compare_timings(a, b, 0.1).front().status, sp::CompareStatus::regression);
}

TEST(CompareStatus, EachOutcomeAndItsSpelling) {
  const std::map<std::string, double> a{{"fast", 1.0}, {"gone", 1.0}, {"same", 1.0}, {"slow", 1.0}, {"zero", 0.0}},
      b{{"fast", 0.5}, {"new", 1.0}, {"same", 1.05}, {"slow", 1.2}, {"zero", 1.0}};
  std::map<std::string, std::string> got;
  for (auto& r : sp::compare_timings(a, b, 0.1)) got[r.key] = sp::to_string(r.status);
  const std::map<std::string, std::string> want{{"fast", "faster"}, {"gone", "only in A"},  {"new", "only in B"},
                                                {"same", "same"},   {"slow", "REGRESSION"}, {"zero", "no time"}};
  EXPECT_EQ(got, want);
}
