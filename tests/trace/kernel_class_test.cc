#include "trace/kernel_class.h"

#include <gtest/gtest.h>

namespace gpuscope::trace::detail {
namespace {

struct Case {
  const char* name;
  KernelKind kind;
  MathPrecision precision;
  bool tensor_cores;
};

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
  for (const Case& c : cases) {
    const KernelClass k = classify_kernel(c.name);
    EXPECT_EQ(kernel_kind_name(k.kind), std::string(kernel_kind_name(c.kind))) << c.name;
    EXPECT_EQ(math_precision_name(k.precision), std::string(math_precision_name(c.precision)))
        << c.name;
    EXPECT_EQ(k.tensor_cores, c.tensor_cores) << c.name;
  }
}

}  // namespace
}  // namespace gpuscope::trace::detail
