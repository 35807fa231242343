#include "models/fp8_linear.h"

#include <torch/autograd.h>

#include <limits>

namespace gpuscope::workloads {
namespace {

constexpr double kE4m3Max = 448.0;
constexpr double kE5m2Max = 57344.0;
constexpr int64_t kAlign = 16;

struct Quantized {
  at::Tensor data;       // float8
  at::Tensor inv_scale;  // 0-dim float32
};

// Per-tensor dynamic scaling: the largest magnitude maps to the format's largest finite value.
// Three passes over t: the max-abs reduction, the scaling, the cast.
Quantized quantize(const at::Tensor& t, at::ScalarType fp8_dtype, double format_max) {
  const at::Tensor amax =
      at::linalg_vector_norm(t, std::numeric_limits<double>::infinity()).to(at::kFloat);
  const at::Tensor scale = format_max / amax.clamp_min(1e-12);
  // The product stays in t's dtype (a 0-dim scale does not promote); rounding can step just past
  // the format's maximum, and an out-of-range cast to e4m3fn gives NaN: clamp.
  at::Tensor scaled = t * scale;
  scaled.clamp_(-format_max, format_max);
  return {scaled.to(fp8_dtype), scale.reciprocal()};
}

// _scaled_mm wants every dimension a multiple of 16: pad rows with zeros.
at::Tensor pad_rows(const at::Tensor& x2d) {
  const int64_t rows = x2d.size(0);
  const int64_t padded = (rows + kAlign - 1) / kAlign * kAlign;
  if (padded == rows) return x2d;
  return at::constant_pad_nd(x2d, {0, 0, 0, padded - rows});
}

// _scaled_mm wants its second operand column-major. The same logical matrix in that layout
// (a copy unless it already is).
at::Tensor as_column_major(const at::Tensor& t) {
  return t.t().contiguous().t();
}

at::ScalarType gemm_out_dtype(at::ScalarType wanted) {
  return wanted == at::kHalf || wanted == at::kBFloat16 ? wanted : at::kFloat;
}

class Fp8LinearFunction : public torch::autograd::Function<Fp8LinearFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x2d,
                            const at::Tensor& weight, const at::Tensor& bias,
                            at::ScalarType out_dtype) {
    const at::Tensor padded = pad_rows(x2d.contiguous());
    Quantized qx = quantize(padded, at::kFloat8_e4m3fn, kE4m3Max);
    Quantized qw = quantize(weight, at::kFloat8_e4m3fn, kE4m3Max);
    const auto dtype = gemm_out_dtype(out_dtype);
    std::optional<at::Tensor> epilogue_bias;
    // The epilogue adds a bias only in a 16-bit output dtype.
    if (bias.defined() && dtype != at::kFloat) epilogue_bias = bias.to(dtype);
    // W^T of a row-major [N, K] W is already column-major.
    at::Tensor y = at::_scaled_mm(qx.data, qw.data.t(), qx.inv_scale, qw.inv_scale, epilogue_bias,
                                  std::nullopt, dtype, /*use_fast_accum=*/true);
    if (bias.defined() && !epilogue_bias) y = y + bias.to(dtype);
    ctx->save_for_backward({qx.data, qx.inv_scale, qw.data, qw.inv_scale});
    ctx->saved_data["rows"] = x2d.size(0);
    ctx->saved_data["x_dtype"] = static_cast<int64_t>(x2d.scalar_type());
    ctx->saved_data["w_dtype"] = static_cast<int64_t>(weight.scalar_type());
    ctx->saved_data["has_bias"] = bias.defined();
    return y.narrow(0, 0, x2d.size(0)).to(out_dtype);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x8 = saved[0];
    const at::Tensor& x_inv = saved[1];
    const at::Tensor& w8 = saved[2];
    const at::Tensor& w_inv = saved[3];
    const auto rows = ctx->saved_data["rows"].toInt();
    const auto x_dtype = static_cast<at::ScalarType>(ctx->saved_data["x_dtype"].toInt());
    const auto w_dtype = static_cast<at::ScalarType>(ctx->saved_data["w_dtype"].toInt());

    const at::Tensor grad = pad_rows(grad_outputs[0].contiguous());  // [M, N]
    Quantized qg = quantize(grad, at::kFloat8_e5m2, kE5m2Max);
    // dX = dY W: [M, N] x [N, K].
    at::Tensor grad_x = at::_scaled_mm(qg.data, as_column_major(w8), qg.inv_scale, w_inv,
                                       std::nullopt, std::nullopt, gemm_out_dtype(x_dtype), false)
                            .narrow(0, 0, rows)
                            .to(x_dtype);
    // dW = dY^T X: [N, M] x [M, K].
    at::Tensor grad_w =
        at::_scaled_mm(qg.data.t().contiguous(), as_column_major(x8), qg.inv_scale, x_inv,
                       std::nullopt, std::nullopt, gemm_out_dtype(w_dtype), false)
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
  const at::Tensor y = Fp8LinearFunction::apply(flatten_rows(x), weight, bias, out_dtype);
  return restore_rows(y, x);
}

Fp8Weight quantize_fp8_weight(const at::Tensor& weight) {
  Quantized q = quantize(weight.detach(), at::kFloat8_e4m3fn, kE4m3Max);
  return {std::move(q.data), std::move(q.inv_scale)};
}

at::Tensor fp8_linear_inference(const at::Tensor& x, const Fp8Weight& weight,
                                const at::Tensor& bias, at::ScalarType out_dtype) {
  const at::Tensor x2d = flatten_rows(x);
  const at::Tensor padded = pad_rows(x2d.contiguous());
  Quantized qx = quantize(padded, at::kFloat8_e4m3fn, kE4m3Max);
  const auto dtype = gemm_out_dtype(out_dtype);
  std::optional<at::Tensor> epilogue_bias;
  if (bias.defined() && dtype != at::kFloat) epilogue_bias = bias.to(dtype);
  at::Tensor y = at::_scaled_mm(qx.data, weight.data.t(), qx.inv_scale, weight.inv_scale,
                                epilogue_bias, std::nullopt, dtype, true);
  if (bias.defined() && !epilogue_bias) y = y + bias.to(dtype);
  return restore_rows(y.narrow(0, 0, x2d.size(0)).to(out_dtype), x);
}

}  // namespace gpuscope::workloads
