"""Optimizer.step runs the global post-hooks after the update, as PyTorch's profile_hook_step."""
_global_optimizer_post_hooks = {}
_next_handle_id = 0


class RemovableHandle:
    def __init__(self, hooks, hook_id):
        self._hooks = hooks
        self.id = hook_id

    def remove(self):
        self._hooks.pop(self.id, None)


def register_optimizer_step_post_hook(hook):
    global _next_handle_id
    _next_handle_id += 1
    _global_optimizer_post_hooks[_next_handle_id] = hook
    return RemovableHandle(_global_optimizer_post_hooks, _next_handle_id)


class Optimizer:
    def __init__(self, name="opt"):
        self.name = name
        self.updates = 0

    def step(self, *args, **kwargs):
        self.updates += 1
        for hook in list(_global_optimizer_post_hooks.values()):
            hook(self, args, kwargs)


class SGD(Optimizer):
    pass
