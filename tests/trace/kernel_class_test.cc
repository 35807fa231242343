#include "trace/kernel_class.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "gpuscope/trace.h"

namespace gpuscope::trace::detail {
namespace {

struct Case {
  const char* name;
  KernelKind kind;
  MathPrecision precision;
  bool tensor_cores;
};

void expect_classes(const Case& c) {
  const KernelClass k = classify_kernel(c.name);
  EXPECT_EQ(kernel_kind_name(k.kind), std::string(kernel_kind_name(c.kind))) << c.name;
  EXPECT_EQ(math_precision_name(k.precision), std::string(math_precision_name(c.precision)))
      << c.name;
  EXPECT_EQ(k.tensor_cores, c.tensor_cores) << c.name;
}

// Names from Kineto traces recorded on the H100 (bench/RESULTS.md, session 5) and from ATen,
// cuBLAS and NCCL's naming.
TEST(KernelClass, NamesRecordedOnTheH100) {
  const Case cases[] = {
      {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", KernelKind::gemm, MathPrecision::bf16,
       true},
      {"nvjet_sm90_hsh_128x256_64x4_2x1_v_bz_coopA_TNN", KernelKind::gemm, MathPrecision::fp16,
       true},
      {"sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize256x64x32_"
       "warpgroupsize1x1x1",
       KernelKind::convolution, MathPrecision::bf16, true},
      {"cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_tn_align1>",
       KernelKind::gemm, MathPrecision::bf16, true},
      {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cg",
       KernelKind::attention, MathPrecision::fp16, true},
      {"ampere_sgemm_128x64_nn", KernelKind::gemm, MathPrecision::fp32, false},
      {"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3", KernelKind::gemm,
       MathPrecision::fp32, false},
      {"sm80_xmma_gemm_tf32f32_tf32f32_f32_nn_n_tilesize128x128x16", KernelKind::gemm,
       MathPrecision::tf32, true},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
       KernelKind::elementwise, MathPrecision::unknown, false},
      {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>", KernelKind::reduction,
       MathPrecision::unknown, false},
      {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>",
       KernelKind::reduction, MathPrecision::unknown, false},
      {"void at::native::multi_tensor_apply_kernel<FusedAdamMathFunctor>", KernelKind::optimizer,
       MathPrecision::unknown, false},
      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", KernelKind::communication, MathPrecision::unknown,
       false},
      {"void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16>", KernelKind::copy,
       MathPrecision::unknown, false},
      {"void cudnn::fusion::convert_dq_to_16bits<true>", KernelKind::other, MathPrecision::unknown,
       false},
      {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float>", KernelKind::copy,
       MathPrecision::unknown, false},
      {"my_custom_kernel", KernelKind::other, MathPrecision::unknown, false},
  };
  for (const Case& c : cases) expect_classes(c);
}

// Mangled names as CUPTI recorded them on the H100 (tests/fixtures/diagnose), labelled by hand.
// Their template arguments hold integer literals ("Li8E": the int 8) that are no precision.
TEST(KernelClass, MangledCudnnAndCutlassNamesFromTheH100Fixtures) {
  const Case cases[] = {
      {"_ZN5cudnn6detail17dgrad_alg1_engineIfLi128ELi6ELi8ELi3ELi3ELi5ELb0ELb0EEEviiiPKT_iS4_iPS2_"
       "18kernel_grad_paramsyifi",
       KernelKind::convolution, MathPrecision::fp32, false},
      {"_ZN5cudnn6detail12dgrad_engineIfLi512ELi6ELi5ELi3ELi3ELi3ELb0EEEviiiPKT_iS4_iPS2_18kernel_"
       "grad_paramsyiyifiii",
       KernelKind::convolution, MathPrecision::fp32, false},
      {"_Z22wgrad_alg0_engine_NHWCIfLi128ELi5ELi5ELi3ELi3ELi3ELb0ELi512EEviiiPKT_iPS0_S2_18kernel_"
       "grad_paramsyifiiii",
       KernelKind::convolution, MathPrecision::fp32, false},
      {"_Z33convolve_common_engine_float_NHWCIffLi1024ELi5ELi5ELi3ELi3ELi3ELb1ELb0ELb0ELb0ELb0EEvi"
       "iiPKT_S2_iPT0_25conv_kernel_common_paramsymffbPKS3_S7_bb",
       KernelKind::convolution, MathPrecision::fp32, false},
      {"_Z26precomputed_convolve_sgemmI13__nv_bfloat16Li128ELi6ELi7ELi3ELi3ELi5ELi1ELb0EEviiiPKT_"
       "iPS1_S3_18kernel_conv_paramsyiffibbS3_S3_Pi",
       KernelKind::convolution, MathPrecision::bf16, false},
      {"_ZN5cudnn17winograd_nonfused20winogradWgradData4x4IffEEvNS0_18WinogradDataParamsIT_T0_EE",
       KernelKind::convolution, MathPrecision::fp32, false},
      {"sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize256x64x8_stage3_"
       "warpsize2x2x1_g1_ffma_aligna4_alignc4_execute_kernel__5x_cudnn",
       KernelKind::convolution, MathPrecision::fp32, false},
      {"sm80_xmma_wgrad_implicit_gemm_indexed_f32f32_f32f32_f32_nhwckrsc_nhwc_tilesize32x32x8_"
       "stage3_warpsize1x2x1_g1_ffma_execute_kernel__5x_cudnn",
       KernelKind::convolution, MathPrecision::fp32, false},
      {"sm90_xmma_dgrad_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_"
       "warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn",
       KernelKind::convolution, MathPrecision::bf16, true},
      {"_ZN17cutlass__5x_cudnn6KernelI71cutlass_tensorop_bf16_s16816dgrad_optimized_bf16_64x64_"
       "64x5_nhwc_align8EEvNT_6ParamsE",
       KernelKind::convolution, MathPrecision::bf16, true},
      {"_ZN7cutlass7Kernel2I41cutlass_80_simt_sgemm_64x64_8x5_tn_align1EEvNT_6ParamsE",
       KernelKind::gemm, MathPrecision::fp32, false},
      {"sm80_xmma_gemm_f32f32_f32f32_f32_nt_n_tilesize64x128x8_stage3_warpsize1x4x1_ffma_aligna4_"
       "alignc4_execute_kernel__5x_cublas",
       KernelKind::gemm, MathPrecision::fp32, false},
      {"sm80_xmma_gemm_cf32cf32_f32f32_cf32_nt_n_tilesize64x32x8_stage3_warpsize2x2x1_ffma_aligna8_"
       "alignc8_execute_kernel__5x_cublas",
       KernelKind::gemm, MathPrecision::fp32, false},
      {"nvjet_sm90_tst_64x8_64x16_4x1_v_bz_bias_TNT", KernelKind::gemm, MathPrecision::bf16, true},
      {"_ZN5cudnn19engines_precompiled16nchwToNhwcKernelIfffLb0ELb1EL21cudnnKernelDataType_t0EEEvN"
       "S0_18nchw2nhwc_params_tIT1_EEPKT_PT0_",
       KernelKind::copy, MathPrecision::unknown, false},
      {"_ZN2at6native13reduce_kernelILi128ELi4ENS0_8ReduceOpIfNS0_7MeanOpsIffffEEjfLi4ELi4EEEEEvT1"
       "_",
       KernelKind::reduction, MathPrecision::unknown, false},
      {"_ZN5cudnn31batchnorm_fwtr_nhwc_semiPersistIfffLi512ELi16ELi2ELi4ELi1ELi0ELb0ELb0ELb1ELi2EE"
       "EvNS_22NhwcBatchNormFwdParamsIT_T0_EE",
       KernelKind::reduction, MathPrecision::unknown, false},
      {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEE"
       "EviT0_T1_",
       KernelKind::elementwise, MathPrecision::unknown, false},
  };
  for (const Case& c : cases) expect_classes(c);
}

// None of the programs behind the H100 fixtures computed in int8 or fp8, and none ran a float
// GEMM or convolution on tensor cores without saying tf32 or a 16-bit type: every recorded
// kernel name must agree.
TEST(KernelClass, NoKernelOfTheH100FixturesIsCalledInt8OrFp8) {
  std::set<std::string> names;
  for (const auto& dir :
       std::filesystem::directory_iterator(std::string(GPUSCOPE_TEST_FIXTURES) + "/diagnose")) {
    if (!dir.is_directory()) continue;
    for (const auto& file : std::filesystem::directory_iterator(dir.path())) {
      if (file.path().extension() != ".jsonl" ||
          file.path().filename().string().rfind("gpuscope-trace-", 0) != 0) {
        continue;
      }
      auto trace = read_process_trace(file.path());
      ASSERT_TRUE(trace.ok()) << file.path();
      for (const KernelRecord& k : trace->kernels) names.insert(std::string(trace->name(k.name)));
    }
  }
  ASSERT_GT(names.size(), 100u);
  for (const std::string& name : names) {
    const KernelClass k = classify_kernel(name);
    EXPECT_NE(k.precision, MathPrecision::int8) << name;
    EXPECT_NE(k.precision, MathPrecision::fp8) << name;
  }
}

TEST(KernelClass, TheCollectiveOfANcclKernel) {
  EXPECT_STREQ(
      collective_of("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
      "all_reduce");
  EXPECT_STREQ(collective_of("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, "
                             "ncclWork*)"),
               "all_gather");
  EXPECT_STREQ(collective_of("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"), "reduce_scatter");
  EXPECT_STREQ(collective_of("ncclDevKernel_Broadcast_RING_LL"), "broadcast");
  EXPECT_STREQ(collective_of("ncclDevKernel_SendRecv"), "send_recv");
  EXPECT_STREQ(collective_of("ncclDevKernel_Reduce_Sum_f32_RING_LL"), "reduce");
  EXPECT_STREQ(collective_of("ncclDevKernel_Generic"), "other");
  EXPECT_EQ(classify_kernel("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL").collective,
            "reduce_scatter");
  EXPECT_TRUE(classify_kernel("ampere_sgemm_128x64_nn").collective.empty());
}

}  // namespace
}  // namespace gpuscope::trace::detail
