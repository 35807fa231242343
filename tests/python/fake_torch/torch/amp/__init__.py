from torch.amp.grad_scaler import GradScaler  # noqa: F401
