"""gpuscope's shim: step marks and data-wait ranges for a PyTorch program, without code changes.

`gpuscope trace` and `gpuscope diagnose` put this folder first on PYTHONPATH, so that Python's
`site` imports this module at start-up. It does two things, and nothing else:

1. Waits for `torch`: a finder first on sys.meta_path notices the import of `torch` and, once
   torch's own code has run, loads _gpuscope_torch_hooks.py from this folder, which registers the
   hooks (docs/python-shim.md says which). It never imports torch itself; for any other import
   it costs one string comparison. GPUSCOPE_SHIM=0 leaves it out.
2. Runs the sitecustomize module that Python would have run without us: the next one on sys.path
   after this folder, as opentelemetry-instrument and ddtrace-run do. Its exceptions propagate,
   so that `site` reports them exactly as it would have.

An error of the shim's own is caught and reported in one line on stderr; the program goes on.
"""
import os
import sys

# The import system's own classes and functions (importlib.machinery.PathFinder,
# importlib.util.module_from_spec), reached without importing the importlib package, so that a
# program's start-up and sys.modules stay as they were.
_PathFinder = sys.modules["_frozen_importlib_external"].PathFinder
_module_from_spec = sys.modules["_frozen_importlib"].module_from_spec

_HERE = os.path.dirname(os.path.abspath(__file__))
_HOOKS_MODULE = "_gpuscope_torch_hooks"


def _is_shim_dir(path):
    """True for this folder and any other copy of the shim (a gpuscope run inside another)."""
    try:
        return os.path.isfile(os.path.join(path or os.curdir, _HOOKS_MODULE + ".py"))
    except (TypeError, ValueError):
        return False


def _complain(where, err):
    message = "%s: %s" % (type(err).__name__, err)
    sys.stderr.write(
        "gpuscope-shim: disabled after an error in %s: %s\n" % (where, message.replace("\n", " "))
    )


class _TorchLoader:
    """Runs torch's own loader, then installs the hooks; torch sees its own loader throughout."""

    def __init__(self, loader, hook):
        self._loader = loader
        self._hook = hook

    def create_module(self, spec):
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        spec = getattr(module, "__spec__", None)
        if spec is not None:
            spec.loader = self._loader
        module.__loader__ = self._loader
        self._loader.exec_module(module)
        self._hook.done = True
        _on_torch_imported(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _TorchImportHook:
    """A sys.meta_path finder that hands torch's spec back with a _TorchLoader around its loader.

    It asks the finders after it, in order, as the import system would; for any other module it
    returns None at once. It stays until torch has been loaded, since importlib.util.find_spec
    ("is torch installed?") asks it for specs that are never loaded.
    """

    gpuscope_shim = True  # marks the finder, so that a second copy of the shim adds none

    def __init__(self):
        self.done = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" or self.done:
            return None
        meta_path = sys.meta_path
        start = meta_path.index(self) + 1 if self in meta_path else 0
        spec = None
        for finder in meta_path[start:]:
            find_spec = getattr(finder, "find_spec", None)
            if find_spec is None:
                return None  # a legacy finder: let the import system ask it; torch goes unhooked
            spec = find_spec(fullname, path, target)
            if spec is not None:
                break
        if spec is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _TorchLoader(spec.loader, self)
        return spec


def _on_torch_imported(torch):
    try:
        hooks = sys.modules.get(_HOOKS_MODULE)
        if hooks is None:
            spec = _PathFinder.find_spec(_HOOKS_MODULE, [_HERE])
            hooks = _module_from_spec(spec)
            sys.modules[_HOOKS_MODULE] = hooks
            try:
                spec.loader.exec_module(hooks)
            except BaseException:
                del sys.modules[_HOOKS_MODULE]
                raise
    except Exception as err:
        _complain("loading its torch hooks", err)
        return
    hooks.install(torch)


def _install_import_hook():
    if any(getattr(finder, "gpuscope_shim", False) for finder in sys.meta_path):
        return
    if "torch" in sys.modules:  # imported by an earlier sitecustomize or .pth file
        _on_torch_imported(sys.modules["torch"])
    else:
        sys.meta_path.insert(0, _TorchImportHook())


def _run_next_sitecustomize():
    """Loads the next sitecustomize on sys.path after this folder, skipping copies of the shim,
    into sys.modules as `import` would have. Its exceptions propagate to `site`, which reports
    them as it always does."""
    shims = [i for i, path in enumerate(sys.path) if _is_shim_dir(path)]
    after = sys.path[shims[0] + 1 :] if shims else sys.path
    search = [path for path in after if not _is_shim_dir(path)]
    spec = _PathFinder.find_spec("sitecustomize", search)
    if spec is None or spec.loader is None:
        return
    if os.environ.get("GPUSCOPE_SHIM_DEBUG") == "1":
        sys.stderr.write("gpuscope-shim: running the next sitecustomize, %s\n" % spec.origin)
    module = _module_from_spec(spec)
    this_module = sys.modules.get("sitecustomize")
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules["sitecustomize"] = this_module
        raise


if os.environ.get("GPUSCOPE_SHIM", "1") != "0":
    try:
        _install_import_hook()
    except Exception as _err:
        _complain("start-up", _err)
_run_next_sitecustomize()
