#!/usr/bin/env python3
"""No tensor cores: a GEMM-heavy MLP (8 x Linear(4096, 4096) + GELU, batch 2048) trained in
plain fp32 with PyTorch's defaults (TF32 off for matmuls), so every GEMM runs on the CUDA cores.

--fixed: the same model under AMP bf16 (torch.autocast): the GEMMs run on tensor cores.
--fixed --fix tf32: fp32 kept, TF32 allowed instead
(torch.backends.cuda.matmul.allow_tf32 = True, i.e. set_float32_matmul_precision("high")).

  python3 bench/diagnose_examples/no_tensor_cores.py                     # the flaw
  python3 bench/diagnose_examples/no_tensor_cores.py --fixed             # AMP bf16
  python3 bench/diagnose_examples/no_tensor_cores.py --fixed --fix tf32  # TF32
"""
import torch

from _diagnose_example import autocast, parse_args, run_timed, vector_batches

LAYERS = 8


def extra(parser):
    parser.add_argument("--fix", choices=["bf16", "tf32"], default="bf16",
                        help="what --fixed turns on (default bf16: AMP)")
    parser.add_argument("--width", type=int, default=4096, help="features per layer")


def main():
    args = parse_args(
        __doc__, "fp32 GEMMs without tensor cores",
        steps=200, batch=2048, warmup=5, extra=extra,
    )
    device = torch.device(args.device)
    torch.manual_seed(0)
    width = args.width if args.cuda else 64
    amp = args.fixed and args.fix == "bf16"
    torch.backends.cuda.matmul.allow_tf32 = args.fixed and args.fix == "tf32"
    layers = []
    for _ in range(LAYERS):
        layers += [torch.nn.Linear(width, width), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=args.cuda)
    loss_fn = torch.nn.MSELoss()
    batches = vector_batches(args, device, width, 2)

    def iteration(i):
        inputs, targets = batches[i % len(batches)]
        with autocast(args, enabled=amp):
            loss = loss_fn(model(inputs).float(), targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    fix = args.fix if args.fixed else "fp32"
    flops = 6 * LAYERS * args.batch * width * width  # forward + backward GEMMs
    run_timed(args, "no_tensor_cores", iteration,
              extra=lambda: {"precision": fix, "gemm_flops_per_step": flops})


if __name__ == "__main__":
    main()
