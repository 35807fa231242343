"""ResNet-18 training with one planted flaw (or none), for `gpuscope diagnose` fixtures.

  --flaw none               the healthy loop of bench/trace_examples/healthy_train.py
  --flaw fp32               no autocast, TF32 off: GEMMs and convolutions on CUDA cores
  --flaw cudnn_defaults     NCHW tensors and cudnn.benchmark off (AMP kept)
  --flaw unfused_optimizer  Adam with foreach=False: a chain of small kernels per parameter
  --flaw pageable_copies    each batch copied from pageable host memory with a blocking .to()
  --flaw small_batch        batch 8 (pass --batch 8): short kernels, most memory unused

Times itself as the trace examples do (one JSON line on stdout).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "trace_examples"))
from _trace_example import parse_args, run_timed  # noqa: E402

FLAWS = ["none", "fp32", "cudnn_defaults", "unfused_optimizer", "pageable_copies", "small_batch"]


def main():
    flaw = "none"
    if "--flaw" in sys.argv:
        at = sys.argv.index("--flaw")
        flaw = sys.argv[at + 1]
        del sys.argv[at : at + 2]
    if flaw not in FLAWS:
        sys.exit(f"--flaw must be one of {FLAWS}")
    args = parse_args(__doc__.splitlines()[0], steps=50, batch=128)
    import torchvision

    device = torch.device("cuda")
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = flaw != "cudnn_defaults"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = flaw != "fp32"
    layout = torch.contiguous_format if flaw == "cudnn_defaults" else torch.channels_last
    model = torchvision.models.resnet18(num_classes=1000).to(device).to(memory_format=layout)
    if flaw == "unfused_optimizer":
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)
    loss_fn = torch.nn.CrossEntropyLoss()
    amp = flaw != "fp32"

    generator = torch.Generator().manual_seed(1)
    host = [
        (torch.randn(args.batch, 3, 224, 224, generator=generator), torch.randint(0, 1000, (args.batch,)))
        for _ in range(2)
    ]
    on_gpu = [(x.to(device).contiguous(memory_format=layout), y.to(device)) for x, y in host]

    def iteration(i):
        if flaw == "pageable_copies":
            x, y = host[i % len(host)]
            images, labels = x.to(device).contiguous(memory_format=layout), y.to(device)
        else:
            images, labels = on_gpu[i % len(on_gpu)]
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = loss_fn(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    run_timed(f"flaws_{flaw}", args, iteration)


if __name__ == "__main__":
    main()
