from torch.cuda import nvtx  # noqa: F401
