from torch.optim.optimizer import SGD, Optimizer  # noqa: F401

# As PyTorch's torch/optim/__init__.py: the submodule is in sys.modules but no attribute here.
del optimizer  # noqa: F821
