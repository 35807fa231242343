#!/usr/bin/env python3
"""Is cuBLASLt's tanh-GELU epilogue an acceptable stand-in for timm's exact (erf) GELU in bf16
inference? Runs on the CPU (any torch): GELU applied to fp32 GEMM results then rounded to bf16,
elementwise and through a ViT-B/16 with timm's initialization (random weights, batch 8), each
compared with the fp32 model. Results in bench/RESULTS.md ("tanh-GELU in bf16").
    PYTHONPATH=.deps/torch python3 bench/analysis/gelu_tanh_vs_erf_bf16.py
"""
import torch, torch.nn.functional as F, math
torch.manual_seed(0)
torch.set_num_threads(2)
# 1) elementwise: fp32 pre-activations, GELU in fp32, rounded to bf16
x = torch.randn(4_000_000) * 1.5
e = F.gelu(x).bfloat16(); t = F.gelu(x, approximate="tanh").bfloat16()
diff = (e.float() - t.float()).abs()
ulp = torch.where(e.float() == 0, torch.tensor(1e-30), (e.float().abs() * 2**-7))
print("elementwise: differ %.3f%%, max abs %.2e, max in bf16 ulps %.2f, max fp32 |erf-tanh| %.2e" % (
    100 * (diff > 0).float().mean(), diff.max(), (diff / ulp).max(), (F.gelu(x) - F.gelu(x, approximate="tanh")).abs().max()))

# 2) a ViT-B/16 with timm's init, bf16, exact vs tanh GELU (GELU applied to the fp32 GEMM result)
D, H, L = 768, 12, 12
def tn(*s): return torch.nn.init.trunc_normal_(torch.empty(*s), std=0.02)
P = {"patch": tn(D, 3, 16, 16), "pb": torch.zeros(D), "cls": tn(1, 1, D) * 0 + 1e-6 * torch.randn(1, 1, D), "pos": tn(1, 197, D),
     "blocks": [dict(qkv=tn(3 * D, D), qkvb=torch.zeros(3 * D), proj=tn(D, D), projb=torch.zeros(D),
                     fc1=tn(4 * D, D), fc1b=torch.zeros(4 * D), fc2=tn(D, 4 * D), fc2b=torch.zeros(D)) for _ in range(L)],
     "head": tn(1000, D), "hb": torch.zeros(1000)}
def lin(x, w, b, dt, act=None):
    if dt == torch.float32:
        y = F.linear(x, w, b)
        return F.gelu(y, approximate=act) if act else y
    y = F.linear(x.float(), w.to(dt).float(), b.to(dt).float())  # fp32 accumulate, as cuBLASLt
    if act: y = F.gelu(y, approximate=act)
    return y.to(dt)
def ln(x, dt): return F.layer_norm(x.float(), (D,), eps=1e-6).to(dt)
def vit(img, dt, act):
    x = F.conv2d(img.to(dt).float(), P["patch"].to(dt).float(), P["pb"].to(dt).float(), stride=16).to(dt)
    x = x.flatten(2).transpose(1, 2)
    x = torch.cat([P["cls"].to(dt).expand(x.size(0), -1, -1), x], 1) + P["pos"].to(dt)
    B, N = x.shape[:2]
    for p in P["blocks"]:
        q, k, v = lin(ln(x, dt), p["qkv"], p["qkvb"], dt).view(B, N, 3, H, D // H).permute(2, 0, 3, 1, 4).float()
        a = F.scaled_dot_product_attention(q, k, v).to(dt).transpose(1, 2).reshape(B, N, D)
        x = (x.float() + lin(a, p["proj"], p["projb"], dt).float()).to(dt)
        x = (x.float() + lin(lin(ln(x, dt), p["fc1"], p["fc1b"], dt, act=act), p["fc2"], p["fc2b"], dt).float()).to(dt)
    return lin(ln(x[:, 0], dt), P["head"], P["hb"], dt).float()
img = torch.randn(8, 3, 224, 224)
with torch.no_grad():
    ref = vit(img, torch.float32, "none")
    be = vit(img, torch.bfloat16, "none")
    bt = vit(img, torch.bfloat16, "tanh")
def rel(a, b): return ((a - b).norm() / b.norm()).item()
print("logits rel L2: bf16 exact vs fp32 %.2e, bf16 tanh vs fp32 %.2e, bf16 tanh vs bf16 exact %.2e" % (rel(be, ref), rel(bt, ref), rel(bt, be)))
print("top-1 agree with fp32: exact %d/8, tanh %d/8; tanh vs exact %d/8" % ((be.argmax(1) == ref.argmax(1)).sum(), (bt.argmax(1) == ref.argmax(1)).sum(), (bt.argmax(1) == be.argmax(1)).sum()))
