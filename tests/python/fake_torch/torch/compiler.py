# Set to True by a test to stand in for torch.compile tracing the code that calls it.
_compiling = False


def is_compiling():
    return _compiling
