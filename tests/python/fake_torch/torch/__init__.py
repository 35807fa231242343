"""A stand-in for PyTorch with just what gpuscope's shim touches (tests/python/shim_test.py).

Every NVTX call is recorded in torch.cuda.nvtx.calls instead of reaching a library; the
optimizers, the GradScaler and the DataLoader iterator behave like PyTorch's where the shim
hooks into them (global optimizer step post-hooks, GradScaler.step skipping the optimizer's
step on inf gradients, _BaseDataLoaderIter.__next__ ending with StopIteration).
"""
from torch import amp, cuda, optim, utils  # noqa: F401  (imported eagerly, as PyTorch does)
import torch.utils.data  # noqa: F401
