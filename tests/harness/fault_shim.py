"""The fault injection shim (tests/fault/fault_inject.c), preloaded into paes: the
environment that loads it and tells it what to do (PAES_FAULT_<NAME>=<value>)."""

import os


def fault_shim_variables(shim, **faults):
    """The variables that preload `shim` and set its faults, e.g. pause_at=4096 ->
    PAES_FAULT_PAUSE_AT=4096: for one rank's environment, or to add to another."""
    return {"LD_PRELOAD": shim, **{f"PAES_FAULT_{name.upper()}": str(value) for name, value in faults.items()}}


def fault_shim_env(shim, base=None, **faults):
    """A whole environment (this process's, or `base`) with the shim and its faults."""
    env = dict(os.environ if base is None else base, **fault_shim_variables(shim, **faults))
    # An ASan build refuses to start when another library is preloaded before its runtime.
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0").lstrip(":")
    return env
