#include "capability/lt_matmul.h"

#include <fmt/format.h>

#include <cstring>

namespace gpuscope::capability::detail {

namespace {

cudaDataType_t data_type(ElementType type) {
  switch (type) {
    case ElementType::f64:
      return CUDA_R_64F;
    case ElementType::f32:
      return CUDA_R_32F;
    case ElementType::f16:
      return CUDA_R_16F;
    case ElementType::bf16:
      return CUDA_R_16BF;
    case ElementType::e4m3:
      return CUDA_R_8F_E4M3;
    case ElementType::i8:
      return CUDA_R_8I;
    case ElementType::i32:
      return CUDA_R_32I;
  }
  return CUDA_R_32F;
}

struct ComputeTypes {
  cublasComputeType_t compute;
  cudaDataType_t scale;
};

ComputeTypes compute_types(Precision precision) {
  switch (precision) {
    case Precision::fp64:
      return {CUBLAS_COMPUTE_64F, CUDA_R_64F};
    case Precision::fp32:
      return {CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case Precision::tf32:
      return {CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F};
    case Precision::fp16:
    case Precision::bf16:
    case Precision::fp8:
      return {CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case Precision::int8:
      return {CUBLAS_COMPUTE_32I, CUDA_R_32I};
  }
  return {CUBLAS_COMPUTE_32F, CUDA_R_32F};
}

template <typename T>
void store(unsigned char* slot, T value) {
  std::memcpy(slot, &value, sizeof value);
}

Result<LtLayout> make_layout(ElementType type, int n) {
  cublasLtMatrixLayout_t layout = nullptr;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_API_CHECK(cublasLtMatrixLayoutCreate(&layout, data_type(type), n, n, n)));
  return LtLayout(layout);
}

template <typename T>
int read_config(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attribute) {
  T value{};
  std::size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, sizeof value, &written) !=
      CUBLAS_STATUS_SUCCESS) {
    return -1;
  }
  return static_cast<int>(value);
}

}  // namespace

Result<LtMatmul> LtMatmul::create(cublasLtHandle_t handle, const GemmSpec& spec, int n,
                                  const float* a_scale, const float* b_scale) {
  LtMatmul mm;
  mm.handle_ = handle;
  mm.spec_ = &spec;
  const ComputeTypes types = compute_types(spec.precision);
  cublasLtMatmulDesc_t desc = nullptr;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_API_CHECK(cublasLtMatmulDescCreate(&desc, types.compute, types.scale)));
  mm.desc_ = LtMatmulDesc(desc);
  const cublasOperation_t op_a = spec.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = CUBLAS_OP_N;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a)));
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b)));
  if (spec.input == ElementType::e4m3) {
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cublasLtMatmulDescSetAttribute(
        desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof a_scale)));
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cublasLtMatmulDescSetAttribute(
        desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof b_scale)));
  }
  GPUSCOPE_ASSIGN_OR_RETURN(mm.a_layout_, make_layout(spec.input, n));
  GPUSCOPE_ASSIGN_OR_RETURN(mm.b_layout_, make_layout(spec.input, n));
  GPUSCOPE_ASSIGN_OR_RETURN(mm.c_layout_, make_layout(spec.output, n));
  switch (types.scale) {
    case CUDA_R_64F:
      store(mm.alpha_, 1.0);
      store(mm.beta_, 0.0);
      break;
    case CUDA_R_32I:
      store(mm.alpha_, std::int32_t{1});
      store(mm.beta_, std::int32_t{0});
      break;
    default:
      store(mm.alpha_, 1.0f);
      store(mm.beta_, 0.0f);
      break;
  }
  return mm;
}

Result<std::vector<cublasLtMatmulHeuristicResult_t>> LtMatmul::heuristics(
    std::uint64_t workspace_bytes, int count) const {
  cublasLtMatmulPreference_t pref_handle = nullptr;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cublasLtMatmulPreferenceCreate(&pref_handle)));
  LtPreference pref(pref_handle);
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(
      cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                           &workspace_bytes, sizeof workspace_bytes)));
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(count));
  int returned = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      handle_, desc_.get(), a_layout_.get(), b_layout_.get(), c_layout_.get(), c_layout_.get(),
      pref.get(), count, results.data(), &returned);
  if (status != CUBLAS_STATUS_SUCCESS && status != CUBLAS_STATUS_NOT_SUPPORTED) {
    return GPUSCOPE_API_CHECK(status);
  }
  std::vector<cublasLtMatmulHeuristicResult_t> usable;
  for (int i = 0; i < returned; ++i) {
    if (results[static_cast<std::size_t>(i)].state == CUBLAS_STATUS_SUCCESS) {
      usable.push_back(results[static_cast<std::size_t>(i)]);
    }
  }
  if (usable.empty()) {
    return Status(Code::not_supported,
                  fmt::format("cuBLASLt has no {} algorithm for this device ({})",
                              precision_name(spec_->precision), cublasLtGetStatusName(status)));
  }
  return usable;
}

Status LtMatmul::run(const cublasLtMatmulAlgo_t& algo, const void* a, const void* b, void* d,
                     void* workspace, std::size_t workspace_bytes, cudaStream_t stream) const {
  return GPUSCOPE_API_CHECK(cublasLtMatmul(
      handle_, desc_.get(), alpha_, a, a_layout_.get(), b, b_layout_.get(), beta_, d,
      c_layout_.get(), d, c_layout_.get(), &algo, workspace, workspace_bytes, stream));
}

GemmAlgorithm describe_algorithm(const cublasLtMatmulAlgo_t& algo) {
  GemmAlgorithm info;
  info.algo_id = read_config<std::int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID);
  info.tile_id = read_config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
  info.split_k = read_config<std::int32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
  info.reduction_scheme = read_config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
  info.cta_swizzling = read_config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
  info.custom_option = read_config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
  info.stages_id = read_config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID);
  info.inner_shape_id = read_config<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID);
  info.cluster_shape_id = read_config<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  return info;
}

}  // namespace gpuscope::capability::detail
