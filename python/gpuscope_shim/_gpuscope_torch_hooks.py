"""The hooks gpuscope's shim registers once `torch` is imported (loaded by sitecustomize.py).

- An NVTX mark "gpuscope.step" once per training iteration: after the step of the pacing
  optimizer. The pacing optimizer is the first optimizer object whose step was called, directly
  or through GradScaler.step; when it is garbage-collected, the next one to step takes over. So
  a GAN (two optimizers), or a model with one optimizer per part, gives one mark per iteration,
  always at the same point of it. A step GradScaler skips (inf/NaN gradients) still counts: it
  is an iteration all the same. DataLoader worker processes emit no marks.
- An NVTX range "gpuscope.data_wait" around each DataLoader iterator's __next__: the time the
  training loop waited for its next batch.
- An NVTX mark "gpuscope.steps_expected" once, when the program makes its first optimizer: step
  marks will come, so the trace window waits for them rather than opening on time during a long
  start (torch.compile compiles in the first step; a dataset may take minutes to load).

Only NVTX calls are added: no synchronization, no output. An exception inside a hook disables
them all, with one line on stderr; GPUSCOPE_SHIM_DEBUG=1 says on stderr what was installed.
"""
import functools
import os
import sys
import weakref

STEP_MARK = "gpuscope.step"
DATA_WAIT_RANGE = "gpuscope.data_wait"
STEPS_EXPECTED_MARK = "gpuscope.steps_expected"

_installed = False
_disabled = False
_debug = os.environ.get("GPUSCOPE_SHIM_DEBUG") == "1"


def _log(message):
    if _debug:
        sys.stderr.write("gpuscope-shim: %s\n" % message)


def _disable(where, err):
    global _disabled
    if _disabled:
        return
    _disabled = True
    message = "%s: %s" % (type(err).__name__, err)
    sys.stderr.write(
        "gpuscope-shim: disabled after an error in %s: %s\n" % (where, message.replace("\n", " "))
    )


def _reference(obj):
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj


class _Steps:
    """Counts iterations from optimizer steps (see the module's docstring for the rule)."""

    def __init__(self, mark, get_worker_info):
        self._mark = mark
        self._get_worker_info = get_worker_info
        self._pacer = None  # a weak reference to the pacing optimizer
        self.accounted = 0  # optimizer steps seen, taken or skipped by a GradScaler

    def on_step(self, optimizer):
        self.accounted += 1
        pacer = self._pacer() if self._pacer is not None else None
        if pacer is None:
            self._pacer = _reference(optimizer)
            pacer = optimizer
        if optimizer is pacer and self._get_worker_info() is None:
            self._mark(STEP_MARK)


_steps = None


def _on_optimizer_step(optimizer, args, kwargs):
    if _disabled:
        return
    try:
        _steps.on_step(optimizer)
    except Exception as err:
        _disable("the optimizer step hook", err)


_steps_expected = False


def _on_optimizer_made():
    global _steps_expected
    if _disabled or _steps_expected:
        return
    try:
        if _steps._get_worker_info() is None:
            _steps_expected = True
            _steps._mark(STEPS_EXPECTED_MARK)
    except Exception as err:
        _disable("the optimizer hook", err)


def _wrap_optimizer_init(cls):
    """Makes cls.__init__ say, once, that steps will come; a no-op when already wrapped."""
    original = cls.__dict__.get("__init__")
    if original is None or getattr(original, "_gpuscope_wrapped", False):
        return

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        _on_optimizer_made()

    __init__._gpuscope_wrapped = True
    cls.__init__ = __init__


def _wrap_grad_scaler_step(cls):
    """Makes cls.step account for an optimizer step it skipped; a no-op when already wrapped."""
    original = cls.__dict__.get("step")
    if original is None or getattr(original, "_gpuscope_wrapped", False):
        return False

    @functools.wraps(original)
    def step(self, optimizer, *args, **kwargs):
        before = _steps.accounted
        result = original(self, optimizer, *args, **kwargs)
        if _steps.accounted == before:  # the scaler skipped optimizer.step() on inf/NaN
            _on_optimizer_step(optimizer, args, kwargs)
        return result

    step._gpuscope_wrapped = True
    cls.step = step
    return True


def _wrap_next(cls, range_push, range_pop):
    """Puts cls.__next__ inside a data_wait range, also when it raises (StopIteration too)."""
    original = cls.__dict__["__next__"]
    if getattr(original, "_gpuscope_wrapped", False):
        return

    @functools.wraps(original)
    def __next__(self):
        pushed = False
        if not _disabled:
            try:
                range_push(DATA_WAIT_RANGE)
                pushed = True
            except Exception as err:
                _disable("the DataLoader hook", err)
        try:
            return original(self)
        finally:
            if pushed:
                try:
                    range_pop()
                except Exception as err:
                    _disable("the DataLoader hook", err)

    __next__._gpuscope_wrapped = True
    cls.__next__ = __next__


def _nvtx_available(nvtx):
    # A CPU-only build's torch.cuda.nvtx calls a stub that raises: nothing to record, say nothing.
    return type(getattr(nvtx, "_nvtx", None)).__name__ != "_NVTXStub"


def install(torch):
    """Registers the hooks on an imported torch; a second call does nothing."""
    global _installed
    if _installed:
        return
    _installed = True
    try:
        _install(torch)
    except Exception as err:
        _disable("installing the hooks", err)


def _install(torch):
    # Modules by name (sys.modules), never as attributes: torch/optim/__init__.py deletes its
    # `optimizer` attribute, for one.
    global _steps
    from torch.cuda import nvtx
    from torch.optim.optimizer import Optimizer, register_optimizer_step_post_hook
    from torch.utils.data import get_worker_info
    from torch.utils.data.dataloader import _BaseDataLoaderIter

    if not _nvtx_available(nvtx):
        _log("torch has no NVTX (a CPU-only build): no hooks")
        return
    _steps = _Steps(nvtx.mark, get_worker_info)
    register_optimizer_step_post_hook(_on_optimizer_step)
    _wrap_optimizer_init(Optimizer)
    scalers = []
    for module_name in ("torch.amp.grad_scaler", "torch.cuda.amp.grad_scaler"):
        try:
            __import__(module_name)
        except ImportError:
            continue
        cls = getattr(sys.modules[module_name], "GradScaler", None)
        if isinstance(cls, type) and _wrap_grad_scaler_step(cls):
            scalers.append(module_name + ".GradScaler")
    _wrap_next(_BaseDataLoaderIter, nvtx.range_push, nvtx.range_pop)
    _log(
        "torch %s: step marks after optimizer steps (GradScaler: %s), data_wait ranges around "
        "DataLoader batches" % (getattr(torch, "__version__", "?"), ", ".join(scalers) or "none")
    )
