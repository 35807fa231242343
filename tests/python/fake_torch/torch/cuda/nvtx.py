"""Records NVTX calls in `calls`: ("mark", msg), ("push", msg), ("pop",).

FAKE_TORCH_CPU_ONLY=1 stands in for a CPU-only build (PyTorch's _NVTXStub, which raises);
FAKE_NVTX_FAIL_AFTER=N makes every call after the first N raise RuntimeError.
"""
import os

calls = []


class _NVTXStub:
    @staticmethod
    def _fail(*args, **kwargs):
        raise RuntimeError("NVTX functions not installed. Are you sure you have a CUDA build?")

    rangePushA = _fail
    rangePop = _fail
    markA = _fail


class _Recorder:
    def __init__(self, fail_after):
        self._fail_after = fail_after

    def _record(self, *event):
        if self._fail_after is not None and len(calls) >= self._fail_after:
            raise RuntimeError("fake NVTX failure")
        calls.append(event)
        return 0

    def rangePushA(self, msg):
        return self._record("push", msg)

    def rangePop(self):
        return self._record("pop")

    def markA(self, msg):
        return self._record("mark", msg)


if os.environ.get("FAKE_TORCH_CPU_ONLY") == "1":
    _nvtx = _NVTXStub()
else:
    _fail_after = os.environ.get("FAKE_NVTX_FAIL_AFTER")
    _nvtx = _Recorder(int(_fail_after) if _fail_after else None)


def range_push(msg):
    return _nvtx.rangePushA(msg)


def range_pop():
    return _nvtx.rangePop()


def mark(msg):
    return _nvtx.markA(msg)
