#include "trace/kernel_class.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <initializer_list>

namespace gpuscope::trace::detail {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool has(const std::string& name, std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [&](std::string_view n) { return name.find(n) != std::string::npos; });
}

// cuBLAS's nvjet kernels name their types after the prefix: nvjet[_sm90]_<A><compute><D>_...,
// one letter each (h fp16, t bf16, s fp32, d fp64, e/q fp8, i int8).
MathPrecision nvjet_precision(const std::string& name, bool& tensor_cores) {
  std::size_t at = name.find("nvjet_");
  if (at == std::string::npos) return MathPrecision::unknown;
  at += 6;
  if (name.compare(at, 2, "sm") == 0) {
    const std::size_t underscore = name.find('_', at);
    if (underscore == std::string::npos) return MathPrecision::unknown;
    at = underscore + 1;
  }
  if (at >= name.size()) return MathPrecision::unknown;
  tensor_cores = true;
  switch (name[at]) {
    case 'h':
      return MathPrecision::fp16;
    case 't':
      return MathPrecision::bf16;
    case 'e':
    case 'q':
      return MathPrecision::fp8;
    case 'i':
      return MathPrecision::int8;
    case 'd':
      tensor_cores = false;
      return MathPrecision::fp64;
    case 's':
      tensor_cores = has(name, {"tf32"});
      return tensor_cores ? MathPrecision::tf32 : MathPrecision::fp32;
    default:
      tensor_cores = false;
      return MathPrecision::unknown;
  }
}

// A mangled name's template arguments hold integer literals ("Li8E": the int 8, "Lb0E": false)
// that would read as precision tokens ("i8"): dropped.
std::string without_mangled_literals(std::string_view raw) {
  if (raw.substr(0, 2) != "_Z") return std::string(raw);
  std::string out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == 'L' && i + 2 < raw.size() &&
        std::islower(static_cast<unsigned char>(raw[i + 1]))) {
      std::size_t end = i + 2;
      if (end < raw.size() && raw[end] == 'n') ++end;  // a negative literal
      const std::size_t digits = end;
      while (end < raw.size() && std::isdigit(static_cast<unsigned char>(raw[end]))) ++end;
      if (end > digits && end < raw.size() && raw[end] == 'E') {
        i = end;
        continue;
      }
    }
    out += raw[i];
  }
  return out;
}

// The first template argument of a mangled function (_Z[N]<length><name>...I<argument>): the
// element type of cuDNN's and ATen's templated kernels (dgrad_alg1_engine<float, ...>).
MathPrecision mangled_element_type(std::string_view raw) {
  if (raw.substr(0, 2) != "_Z") return MathPrecision::unknown;
  std::size_t at = 2;
  if (at < raw.size() && raw[at] == 'N') ++at;
  bool named = false;
  while (at < raw.size() && std::isdigit(static_cast<unsigned char>(raw[at]))) {
    std::size_t length = 0;
    while (at < raw.size() && std::isdigit(static_cast<unsigned char>(raw[at]))) {
      length = length * 10 + static_cast<std::size_t>(raw[at++] - '0');
    }
    at += length;
    named = true;
  }
  if (!named || at >= raw.size() || raw[at] != 'I') return MathPrecision::unknown;
  const std::string_view argument = raw.substr(at + 1);
  const auto starts = [&](std::string_view prefix) {
    return argument.substr(0, prefix.size()) == prefix;
  };
  if (starts("f")) return MathPrecision::fp32;
  if (starts("d")) return MathPrecision::fp64;
  if (starts("13__nv_bfloat16") || starts("N3c108BFloat16E")) return MathPrecision::bf16;
  if (starts("6__half") || starts("N3c104HalfE")) return MathPrecision::fp16;
  return MathPrecision::unknown;
}

MathPrecision precision_from_tokens(const std::string& name) {
  if (has(name, {"e4m3", "e5m2", "fp8", "f8f6f4"})) return MathPrecision::fp8;
  if (has(name, {"tf32"})) return MathPrecision::tf32;
  if (has(name, {"bf16", "bfloat16"})) return MathPrecision::bf16;
  if (has(name, {"f16", "fp16", "half", "hgemm", "h1688", "h884", "h16816"}))
    return MathPrecision::fp16;
  if (has(name, {"s8s8", "i8", "int8", "imma"})) return MathPrecision::int8;
  if (has(name, {"dgemm", "f64", "double"})) return MathPrecision::fp64;
  if (has(name, {"sgemm", "f32", "float"})) return MathPrecision::fp32;
  return MathPrecision::unknown;
}

bool tensor_core_tokens(const std::string& name) {
  return has(name, {"tensorop", "hmma", "wgmma", "imma", "s1688", "s16816", "h1688", "h884",
                    "h16816", "i8816", "gmma", "tcgen05", "umma"});
}

}  // namespace

const char* kernel_kind_name(KernelKind kind) {
  switch (kind) {
    case KernelKind::gemm:
      return "gemm";
    case KernelKind::convolution:
      return "convolution";
    case KernelKind::attention:
      return "attention";
    case KernelKind::elementwise:
      return "elementwise";
    case KernelKind::reduction:
      return "reduction";
    case KernelKind::optimizer:
      return "optimizer";
    case KernelKind::communication:
      return "communication";
    case KernelKind::copy:
      return "copy";
    case KernelKind::other:
      return "other";
  }
  return "other";
}

const char* math_precision_name(MathPrecision precision) {
  switch (precision) {
    case MathPrecision::unknown:
      return "unknown";
    case MathPrecision::fp64:
      return "fp64";
    case MathPrecision::fp32:
      return "fp32";
    case MathPrecision::tf32:
      return "tf32";
    case MathPrecision::fp16:
      return "fp16";
    case MathPrecision::bf16:
      return "bf16";
    case MathPrecision::fp8:
      return "fp8";
    case MathPrecision::int8:
      return "int8";
  }
  return "unknown";
}

const char* collective_of(std::string_view raw) {
  const std::string name = lower(raw);
  // The longer names first: "reducescatter" and "allreduce" hold "reduce".
  if (has(name, {"allreduce"})) return "all_reduce";
  if (has(name, {"reducescatter"})) return "reduce_scatter";
  if (has(name, {"allgather"})) return "all_gather";
  if (has(name, {"broadcast"})) return "broadcast";
  if (has(name, {"sendrecv", "_send", "_recv"})) return "send_recv";
  if (has(name, {"reduce"})) return "reduce";
  return "other";
}

KernelClass classify_kernel(std::string_view raw) {
  const std::string name = lower(without_mangled_literals(raw));
  KernelClass c;
  if (has(name, {"nccl"})) {
    c.kind = KernelKind::communication;
    c.collective = collective_of(raw);
    return c;
  }
  // "convert" (dtype conversions) is no convolution.
  std::string no_convert = name;
  for (std::size_t at; (at = no_convert.find("convert")) != std::string::npos;) {
    no_convert.replace(at, 7, "cnvrt");
  }
  if (has(name, {"flash", "fmha", "sdpa", "attention", "attn", "mem_eff"})) {
    c.kind = KernelKind::attention;
  } else if (has(name, {"multi_tensor_apply", "adam", "fused_sgd", "lamb", "optimizer"})) {
    c.kind = KernelKind::optimizer;
    return c;
  } else if (has(no_convert, {"fprop", "dgrad", "wgrad", "convolution", "convolve", "conv2d",
                              "conv3d", "_conv", "conv_", "winograd", "implicit_gemm"})) {
    c.kind = KernelKind::convolution;
  } else if (has(name,
                 {"nvjet", "gemm", "cutlass", "xmma", "matmul", "gemv", "cublas", "triton_tem"})) {
    c.kind = KernelKind::gemm;
  } else if (has(name, {"elementwise", "pointwise", "triton_poi"})) {
    c.kind = KernelKind::elementwise;
    return c;
  } else if (has(name, {"nchwtonhwc", "nhwctonchw", "transpose", "copy", "cat_", "catarray",
                        "index", "gather", "scatter", "permute"})) {
    c.kind = KernelKind::copy;
    return c;
  } else if (has(name, {"reduce", "norm", "softmax", "triton_red", "triton_per", "cross_entropy",
                        "nll_loss", "argmax"})) {
    c.kind = KernelKind::reduction;
    return c;
  } else if (has(name, {"fill", "activation", "gelu", "relu", "dropout"})) {
    c.kind = KernelKind::elementwise;
    return c;
  } else {
    return c;
  }
  // A matrix kernel (GEMM, convolution, attention): its arithmetic and whether tensor cores run it.
  bool nvjet_tensor = false;
  c.precision = nvjet_precision(name, nvjet_tensor);
  if (c.precision != MathPrecision::unknown) {
    c.tensor_cores = nvjet_tensor;
    return c;
  }
  c.precision = mangled_element_type(raw);
  if (c.precision == MathPrecision::unknown) c.precision = precision_from_tokens(name);
  c.tensor_cores = tensor_core_tokens(name) || c.precision == MathPrecision::tf32 ||
                   c.precision == MathPrecision::bf16 || c.precision == MathPrecision::fp8 ||
                   (c.precision == MathPrecision::fp16 && !has(name, {"hgemm"})) ||
                   (c.kind == KernelKind::attention && c.precision != MathPrecision::fp32 &&
                    c.precision != MathPrecision::unknown);
  if (c.precision == MathPrecision::fp32 && !has(name, {"tensorop", "tf32"}))
    c.tensor_cores = false;
  if (c.precision == MathPrecision::fp64) c.tensor_cores = has(name, {"dmma"});
  // SIMT kernels: fp32 arithmetic on the CUDA cores, whatever type they load.
  if (has(name, {"sgemm", "simt", "ffma"})) c.tensor_cores = false;
  return c;
}

}  // namespace gpuscope::trace::detail
