#include "models/residual_linear.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAStream.h>
#include <cublasLt.h>

#include <map>
#include <mutex>
#include <tuple>

namespace gpuscope::workloads {
namespace {

void check(cublasStatus_t status, const char* call) {
  TORCH_CHECK(status == CUBLAS_STATUS_SUCCESS, call, " failed: ", cublasLtGetStatusString(status));
}
#define GPUSCOPE_LT_CHECK(call) check((call), #call)

constexpr uintptr_t kAlignment = 256;

bool aligned(const at::Tensor& t) {
  return reinterpret_cast<uintptr_t>(t.data_ptr()) % kAlignment == 0;
}

// Descriptors and the algorithm for one GEMM shape, made once (shapes are fixed in a run).
class Plan {
 public:
  Plan(int64_t m, int64_t n, int64_t k, cudaDataType_t type, cublasLtHandle_t handle,
       size_t workspace_bytes) {
    GPUSCOPE_LT_CHECK(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t transpose = CUBLAS_OP_T;
    const cublasOperation_t keep = CUBLAS_OP_N;
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    GPUSCOPE_LT_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                                     sizeof transpose));
    GPUSCOPE_LT_CHECK(
        cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof keep));
    GPUSCOPE_LT_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                                     sizeof epilogue));
    // Column-major view of the row-major product: out^T [N, M] = W [N, K] . x^T [K, M] + r^T.
    // W row-major [N, K] is column-major [K, N] (transposed by the op), x row-major [M, K] is
    // column-major [K, M], r and out row-major [M, N] are column-major [N, M].
    GPUSCOPE_LT_CHECK(cublasLtMatrixLayoutCreate(&a_, type, static_cast<uint64_t>(k),
                                                 static_cast<uint64_t>(n), k));
    GPUSCOPE_LT_CHECK(cublasLtMatrixLayoutCreate(&b_, type, static_cast<uint64_t>(k),
                                                 static_cast<uint64_t>(m), k));
    GPUSCOPE_LT_CHECK(cublasLtMatrixLayoutCreate(&c_, type, static_cast<uint64_t>(n),
                                                 static_cast<uint64_t>(m), n));
    cublasLtMatmulPreference_t preference = nullptr;
    GPUSCOPE_LT_CHECK(cublasLtMatmulPreferenceCreate(&preference));
    GPUSCOPE_LT_CHECK(
        cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &workspace_bytes, sizeof workspace_bytes));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t status =
        cublasLtMatmulAlgoGetHeuristic(handle, op_, a_, b_, c_, c_, preference, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(preference);
    GPUSCOPE_LT_CHECK(status);
    TORCH_CHECK(found > 0, "cuBLASLt has no algorithm for a ", m, "x", n, "x", k,
                " GEMM with a bias epilogue");
    algo_ = result.algo;
    workspace_bytes_ = result.workspaceSize;
  }
  ~Plan() {
    if (c_ != nullptr) cublasLtMatrixLayoutDestroy(c_);
    if (b_ != nullptr) cublasLtMatrixLayoutDestroy(b_);
    if (a_ != nullptr) cublasLtMatrixLayoutDestroy(a_);
    if (op_ != nullptr) cublasLtMatmulDescDestroy(op_);
  }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  void run(cublasLtHandle_t handle, const at::Tensor& x, const at::Tensor& weight,
           const at::Tensor& bias, const at::Tensor& residual, at::Tensor& out, void* workspace,
           cudaStream_t stream) {
    const void* bias_pointer = bias.data_ptr();
    GPUSCOPE_LT_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                     &bias_pointer, sizeof bias_pointer));
    const float one = 1.0f;
    GPUSCOPE_LT_CHECK(cublasLtMatmul(handle, op_, &one, weight.data_ptr(), a_, x.data_ptr(), b_,
                                     &one, residual.data_ptr(), c_, out.data_ptr(), c_, &algo_,
                                     workspace, workspace_bytes_, stream));
  }

 private:
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  size_t workspace_bytes_ = 0;
};

using PlanKey = std::tuple<int64_t, int64_t, int64_t, int>;

}  // namespace

bool residual_linear_fits(const at::Tensor& x2d, const at::Tensor& weight, const at::Tensor& bias,
                          const at::Tensor& residual2d) {
  const auto dtype = x2d.scalar_type();
  if (!x2d.is_cuda() || (dtype != at::kHalf && dtype != at::kBFloat16)) return false;
  for (const at::Tensor* t : {&weight, &bias, &residual2d}) {
    if (!t->defined() || t->scalar_type() != dtype || !t->is_cuda()) return false;
  }
  if (x2d.dim() != 2 || weight.dim() != 2 || bias.dim() != 1 || residual2d.dim() != 2) {
    return false;
  }
  const int64_t m = x2d.size(0), k = x2d.size(1), n = weight.size(0);
  if (weight.size(1) != k || bias.size(0) != n || residual2d.size(0) != m ||
      residual2d.size(1) != n || k % 8 != 0 || n % 8 != 0) {
    return false;
  }
  for (const at::Tensor* t : {&x2d, &weight, &bias, &residual2d}) {
    if (!t->is_contiguous() || !aligned(*t)) return false;
  }
  return true;
}

at::Tensor residual_linear(const at::Tensor& x2d, const at::Tensor& weight, const at::Tensor& bias,
                           const at::Tensor& residual2d) {
  static std::mutex mutex;
  static std::map<PlanKey, std::unique_ptr<Plan>> plans;
  const int64_t m = x2d.size(0), k = x2d.size(1), n = weight.size(0);
  const cudaDataType_t type = x2d.scalar_type() == at::kHalf ? CUDA_R_16F : CUDA_R_16BF;
  cublasLtHandle_t handle = at::cuda::getCurrentCUDABlasLtHandle();
  const size_t workspace_bytes = at::cuda::getCUDABlasLtWorkspaceSize();
  at::Tensor out = at::empty_like(residual2d);
  std::lock_guard<std::mutex> lock(mutex);
  auto& plan = plans[PlanKey{m, n, k, static_cast<int>(type)}];
  if (!plan) plan = std::make_unique<Plan>(m, n, k, type, handle, workspace_bytes);
  plan->run(handle, x2d, weight, bias, residual2d, out, at::cuda::getCUDABlasLtWorkspace(),
            c10::cuda::getCurrentCUDAStream());
  return out;
}

}  // namespace gpuscope::workloads
