// The OpenBLAS core rule (openblas_core.hpp): a listed core below the CPU's
// vector level is replaced by the library's core for that level; any other
// stands.
#include <gtest/gtest.h>

#include "suites/gemm/openblas_core.hpp"

using sp::CpuVectors;
using sp::gemm::openblas_core_for;
using sp::gemm::openblas_core_level;
using sp::gemm::openblas_core_override;

namespace {
const CpuVectors kNone{}, kAvx2{true, false, false}, kAvx512{true, true, false}, kBf16{true, true, true};
}

TEST(OpenblasCore, LevelsFollowTheVectorInstructionsOfEachCore) {
  EXPECT_EQ(openblas_core_level("Prescott"), 1);
  EXPECT_EQ(openblas_core_level("NEHALEM"), 1);
  EXPECT_EQ(openblas_core_level("Sandybridge"), 2);
  EXPECT_EQ(openblas_core_level("Haswell"), 3);
  EXPECT_EQ(openblas_core_level("Zen"), 3);
  EXPECT_EQ(openblas_core_level("SkylakeX"), 4);
  EXPECT_EQ(openblas_core_level("cooperlake"), 4);
  EXPECT_EQ(openblas_core_level("SapphireRapids"), 4);
  EXPECT_EQ(openblas_core_level("Zen5"), 0);  // not listed: newer than the table
  EXPECT_EQ(openblas_core_level(""), 0);
}

TEST(OpenblasCore, EachCpuLevelGetsTheLibrarysCoreForIt) {
  EXPECT_EQ(openblas_core_for(kNone), "");
  EXPECT_EQ(openblas_core_for(kAvx2), "Haswell");
  EXPECT_EQ(openblas_core_for(kAvx512), "SkylakeX");
  EXPECT_EQ(openblas_core_for(kBf16), "Cooperlake");
}

TEST(OpenblasCore, OnlyAListedCoreBelowTheCpusLevelIsReplaced) {
  // The fallback of a library that does not know the CPU's model.
  EXPECT_EQ(openblas_core_override("Prescott", kBf16), "Cooperlake");
  EXPECT_EQ(openblas_core_override("Prescott", kAvx512), "SkylakeX");
  EXPECT_EQ(openblas_core_override("Haswell", kAvx512), "SkylakeX");
  EXPECT_EQ(openblas_core_override("Sandybridge", kAvx2), "Haswell");
  // At the CPU's level (or above it) the detection stands.
  EXPECT_EQ(openblas_core_override("Zen", kAvx2), "");
  EXPECT_EQ(openblas_core_override("SkylakeX", kBf16), "");
  EXPECT_EQ(openblas_core_override("SapphireRapids", kBf16), "");
  EXPECT_EQ(openblas_core_override("Cooperlake", kAvx512), "");
  // A CPU without AVX2 has no better core; an unlisted name is never replaced.
  EXPECT_EQ(openblas_core_override("Prescott", kNone), "");
  EXPECT_EQ(openblas_core_override("Zen5", kBf16), "");
}
