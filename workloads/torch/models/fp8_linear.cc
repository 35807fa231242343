#include "models/fp8_linear.h"

#include <c10/cuda/CUDAStream.h>
#include <torch/autograd.h>

#include <limits>

#include "models/fp8_quantize_kernel.h"

namespace gpuscope::workloads {
namespace {

constexpr double kE4m3Max = 448.0;
constexpr double kE5m2Max = 57344.0;
constexpr int64_t kAlign = 16;

int64_t padded_rows_for(int64_t rows) {
  return (rows + kAlign - 1) / kAlign * kAlign;
}

struct Quantized {
  at::Tensor data;        // [padded rows, cols] float8, row-major; undefined if not asked for
  at::Tensor transposed;  // [cols, padded rows] float8: data^T; undefined if not asked for
  at::Tensor inv_scale;   // 0-dim float32: data * inv_scale ~ t
};

// Per-tensor dynamic scaling: the largest magnitude maps to the format's largest finite value.
// t is [rows, cols] contiguous; the results have their rows zero-padded to a multiple of 16, as
// _scaled_mm wants every dimension. On CUDA: ATen's max-abs reduction, then one pass of our
// kernel that scales, casts and writes both layouts. On the CPU (tests): ATen's ops.
Quantized quantize(const at::Tensor& t, at::ScalarType fp8_dtype, double format_max, bool row_major,
                   bool transposed) {
  const int64_t rows = t.size(0), cols = t.size(1);
  const int64_t padded = padded_rows_for(rows);
  const at::Tensor amax =
      at::linalg_vector_norm(t, std::numeric_limits<double>::infinity()).to(at::kFloat);
  Quantized q;
  if (!t.is_cuda()) {
    const at::Tensor scale = format_max / amax.clamp_min(1e-12);
    // The product stays in t's dtype (a 0-dim scale does not promote); rounding can step just
    // past the format's maximum, and an out-of-range cast to e4m3fn gives NaN: clamp.
    at::Tensor scaled = t * scale;
    scaled.clamp_(-format_max, format_max);
    if (padded != rows) scaled = at::constant_pad_nd(scaled, {0, 0, 0, padded - rows});
    at::Tensor data = scaled.to(fp8_dtype);
    if (transposed) q.transposed = data.t().contiguous();
    if (row_major) q.data = data;
    q.inv_scale = scale.reciprocal();
    return q;
  }
  const auto dtype = t.scalar_type();
  TORCH_CHECK(dtype == at::kFloat || dtype == at::kBFloat16 || dtype == at::kHalf,
              "fp8 quantization takes fp32, bf16 or fp16, not ", dtype);
  const auto bytes = t.options().dtype(fp8_dtype);
  if (row_major) q.data = at::empty({padded, cols}, bytes);
  if (transposed) q.transposed = at::empty({cols, padded}, bytes);
  q.inv_scale = at::empty({}, t.options().dtype(at::kFloat));
  Fp8QuantizeArgs args;
  args.source_kind = dtype == at::kBFloat16 ? Fp8SourceKind::bf16
                     : dtype == at::kHalf   ? Fp8SourceKind::fp16
                                            : Fp8SourceKind::fp32;
  args.format = fp8_dtype == at::kFloat8_e5m2 ? Fp8Format::e5m2 : Fp8Format::e4m3;
  args.source = t.data_ptr();
  args.rows = rows;
  args.cols = cols;
  args.padded_rows = padded;
  args.amax = amax.data_ptr<float>();
  args.format_max = static_cast<float>(format_max);
  args.out = row_major ? q.data.data_ptr() : nullptr;
  args.out_transposed = transposed ? q.transposed.data_ptr() : nullptr;
  args.inv_scale = q.inv_scale.data_ptr<float>();
  const cudaError_t status =
      launch_fp8_quantize(args, c10::cuda::getCurrentCUDAStream(t.device().index()));
  TORCH_CHECK(status == cudaSuccess, "fp8 quantization: ", cudaGetErrorString(status));
  return q;
}

at::ScalarType gemm_out_dtype(at::ScalarType wanted) {
  return wanted == at::kHalf || wanted == at::kBFloat16 ? wanted : at::kFloat;
}

class Fp8LinearFunction : public torch::autograd::Function<Fp8LinearFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x2d,
                            const at::Tensor& weight, const at::Tensor& bias,
                            at::ScalarType out_dtype) {
    // Each operand in the layouts its GEMMs take: x row-major here and x^T for dW; W^T
    // (column-major, free as W.t()) here, and W column-major, as (W^T)^T, for dX.
    Quantized qx = quantize(x2d.contiguous(), at::kFloat8_e4m3fn, kE4m3Max, true, true);
    Quantized qw = quantize(weight.contiguous(), at::kFloat8_e4m3fn, kE4m3Max, true, true);
    const auto dtype = gemm_out_dtype(out_dtype);
    std::optional<at::Tensor> epilogue_bias;
    // The epilogue adds a bias only in a 16-bit output dtype.
    if (bias.numel() > 0 && dtype != at::kFloat) epilogue_bias = bias.to(dtype);
    // W^T of a row-major [N, K] W is already column-major.
    at::Tensor y = at::_scaled_mm(qx.data, qw.data.t(), qx.inv_scale, qw.inv_scale, epilogue_bias,
                                  std::nullopt, dtype, /*use_fast_accum=*/true);
    if (bias.numel() > 0 && !epilogue_bias) y = y + bias.to(dtype);
    ctx->save_for_backward({qx.transposed, qx.inv_scale, qw.transposed, qw.inv_scale});
    ctx->saved_data["rows"] = x2d.size(0);
    ctx->saved_data["x_dtype"] = static_cast<int64_t>(x2d.scalar_type());
    ctx->saved_data["w_dtype"] = static_cast<int64_t>(weight.scalar_type());
    ctx->saved_data["has_bias"] = bias.numel() > 0;
    return y.narrow(0, 0, x2d.size(0)).to(out_dtype);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x8_t = saved[0];  // [K, padded M]
    const at::Tensor& x_inv = saved[1];
    const at::Tensor& w8_t = saved[2];  // [K, N]
    const at::Tensor& w_inv = saved[3];
    const auto rows = ctx->saved_data["rows"].toInt();
    const auto x_dtype = static_cast<at::ScalarType>(ctx->saved_data["x_dtype"].toInt());
    const auto w_dtype = static_cast<at::ScalarType>(ctx->saved_data["w_dtype"].toInt());

    // dY [M, N] row-major for dX, and dY^T [N, padded M] row-major for dW.
    Quantized qg = quantize(grad_outputs[0].contiguous(), at::kFloat8_e5m2, kE5m2Max, true, true);
    // dX = dY W: [M, N] x [N, K].
    at::Tensor grad_x = at::_scaled_mm(qg.data, w8_t.t(), qg.inv_scale, w_inv, std::nullopt,
                                       std::nullopt, gemm_out_dtype(x_dtype), false)
                            .narrow(0, 0, rows)
                            .to(x_dtype);
    // dW = dY^T X: [N, M] x [M, K].
    at::Tensor grad_w = at::_scaled_mm(qg.transposed, x8_t.t(), qg.inv_scale, x_inv, std::nullopt,
                                       std::nullopt, gemm_out_dtype(w_dtype), false)
                            .to(w_dtype);
    at::Tensor grad_b;
    if (ctx->saved_data["has_bias"].toBool()) {
      grad_b = grad_outputs[0].sum(0, /*keepdim=*/false, at::kFloat).to(w_dtype);
    }
    return {grad_x, grad_w, grad_b, at::Tensor()};
  }
};

at::Tensor flatten_rows(const at::Tensor& x) {
  return x.reshape({-1, x.size(-1)});
}

at::Tensor restore_rows(const at::Tensor& y2d, const at::Tensor& x) {
  auto sizes = x.sizes().vec();
  sizes.back() = y2d.size(1);
  return y2d.view(sizes);
}

}  // namespace

bool fp8_linear_fits(int64_t in_features, int64_t out_features) {
  return in_features % kAlign == 0 && out_features % kAlign == 0;
}

at::Tensor fp8_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                      at::ScalarType out_dtype) {
  // autograd::Function cannot take an undefined tensor: no bias is an empty one.
  const at::Tensor b = bias.defined() ? bias : at::empty({0}, weight.options());
  const at::Tensor y = Fp8LinearFunction::apply(flatten_rows(x), weight, b, out_dtype);
  return restore_rows(y, x);
}

Fp8Weight quantize_fp8_weight(const at::Tensor& weight) {
  Quantized q = quantize(weight.detach().contiguous(), at::kFloat8_e4m3fn, kE4m3Max, true, false);
  return {std::move(q.data), std::move(q.inv_scale)};
}

at::Tensor fp8_linear_inference(const at::Tensor& x, const Fp8Weight& weight,
                                const at::Tensor& bias, at::ScalarType out_dtype) {
  const at::Tensor x2d = flatten_rows(x);
  Quantized qx = quantize(x2d.contiguous(), at::kFloat8_e4m3fn, kE4m3Max, true, false);
  const auto dtype = gemm_out_dtype(out_dtype);
  std::optional<at::Tensor> epilogue_bias;
  if (bias.defined() && dtype != at::kFloat) epilogue_bias = bias.to(dtype);
  at::Tensor y = at::_scaled_mm(qx.data, weight.data.t(), qx.inv_scale, weight.inv_scale,
                                epilogue_bias, std::nullopt, dtype, true);
  if (bias.defined() && !epilogue_bias) y = y + bias.to(dtype);
  return restore_rows(y.narrow(0, 0, x2d.size(0)).to(out_dtype), x);
}

}  // namespace gpuscope::workloads
