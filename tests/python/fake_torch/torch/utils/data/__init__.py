from torch.utils.data.dataloader import DataLoader  # noqa: F401

# Set to a non-None value by a test to stand in for a DataLoader worker process.
_worker_info = None


def get_worker_info():
    return _worker_info
