class GradScaler:
    """Skips optimizer.step() while `found_inf` is set, as PyTorch's does on inf/NaN gradients."""

    def __init__(self, enabled=True):
        self.enabled = enabled
        self.found_inf = False

    def step(self, optimizer, *args, **kwargs):
        if not self.enabled or not self.found_inf:
            return optimizer.step(*args, **kwargs)
        return None

    def update(self):
        pass
