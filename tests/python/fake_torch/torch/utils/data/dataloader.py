"""A DataLoader over a list; `fail_at=i` makes the i-th __next__ raise ValueError."""
import torch.cuda.nvtx


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._loader = loader
        self._index = 0

    def __iter__(self):
        return self

    def __next__(self):
        torch.cuda.nvtx.calls.append(("next",))  # to check that the data_wait range encloses it
        if self._index == self._loader.fail_at:
            self._index += 1
            raise ValueError("bad sample")
        if self._index >= len(self._loader.items):
            raise StopIteration
        item = self._loader.items[self._index]
        self._index += 1
        return item


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    pass


class DataLoader:
    def __init__(self, items, fail_at=None):
        self.items = list(items)
        self.fail_at = fail_at

    def __iter__(self):
        return _SingleProcessDataLoaderIter(self)
