"""Reading and writing whole files."""

import os


def write_file(path, data, mode=None):
    """Writes the bytes `data` to `path` (then chmod `mode` when given); returns `path`."""
    with open(path, "wb") as f:
        f.write(data)
    if mode is not None:
        os.chmod(path, mode)
    return path


def read_file(path):
    with open(path, "rb") as f:
        return f.read()
