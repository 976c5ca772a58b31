// oneDNN's dispatch ISA against the CPU's vector level (onednn_isa.hpp): a
// capped ISA below the CPU's level is named as a shortfall, one at or above
// it is not, whatever the CPU this test runs on.
#ifdef SP_HAVE_ONEDNN
#include <gtest/gtest.h>
#include <oneapi/dnnl/dnnl_types.h>

#include "suites/conv/onednn_isa.hpp"

namespace {

const sp::CpuVectors kNone{}, kAvx2{true, false, false}, kAvx512{true, true, false}, kBf16{true, true, true};

}  // namespace

TEST(OnednnIsa, NamesAsTheLibraryDoes) {
  EXPECT_EQ(sp::conv::onednn_isa_name(dnnl_cpu_isa_avx512_core_bf16), "avx512_core_bf16");
  EXPECT_EQ(sp::conv::onednn_isa_name(dnnl_cpu_isa_avx2), "avx2");
  EXPECT_EQ(sp::conv::onednn_isa_name(0x1000), "0x1000");
}

TEST(OnednnIsa, ShortfallBelowTheCpusLevelOnly) {
  using sp::conv::onednn_isa_shortfall;
  for (const sp::CpuVectors& cpu : {kAvx512, kBf16}) {
    EXPECT_EQ(onednn_isa_shortfall(dnnl_cpu_isa_avx512_core, cpu), "");
    EXPECT_EQ(onednn_isa_shortfall(dnnl_cpu_isa_avx512_core_amx, cpu), "");
    for (unsigned low : {dnnl_cpu_isa_avx2, dnnl_cpu_isa_avx2_vnni, dnnl_cpu_isa_sse41}) {
      const std::string why = onednn_isa_shortfall(low, cpu);
      EXPECT_NE(why.find("where this CPU has avx512_core"), std::string::npos) << low << ": " << why;
    }
  }
  EXPECT_EQ(onednn_isa_shortfall(dnnl_cpu_isa_avx2, kAvx2), "");
  EXPECT_EQ(onednn_isa_shortfall(dnnl_cpu_isa_avx2_vnni, kAvx2), "");
  EXPECT_NE(onednn_isa_shortfall(dnnl_cpu_isa_avx, kAvx2), "");
  EXPECT_EQ(onednn_isa_shortfall(dnnl_cpu_isa_sse41, kNone), "");
}
#endif
