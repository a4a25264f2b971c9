"""How every private name is checked: a probe runs before its first use, once per process.

A probe that fails raises a RuntimeError naming the installed versions; a process-wide patch
of Keras or TensorFlow is made and undone under `_patch_lock`.
"""
from __future__ import annotations

import functools
import itertools
import threading

import keras
import tensorflow as tf

TESTED = "TensorFlow 2.18 with Keras 3.8 and TensorFlow 2.21 with Keras 3.15"
_made = itertools.count(1)
_passed = set()  # probes that held in this process; a probe shared by several functions runs once
# What a probe found where Keras versions differ ({probe name: description}), for `doctor`.
FOUND = {}


class _Broken(RuntimeError):
    """An assumption about Keras/TensorFlow that no longer holds."""


def _broken(what):
    return _Broken(f"{what} (keras {keras.__version__}, tensorflow {tf.__version__}); "
                   f"gradlab is tested with {TESTED}")


def _probed(probe):
    """Run `probe` (raises RuntimeError if an assumption broke) before the first use of the
    decorated function, once per process however many functions share it."""
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if probe not in _passed:
                _in_a_fresh_thread(probe)
                _passed.add(probe)
            return fn(*args, **kwargs)
        return wrapper
    return decorate


def _in_a_fresh_thread(probe):
    """Run `probe` eagerly and outside any distribution strategy (graphs and strategy scopes
    are per thread), even when its first use is while a replica step is traced."""
    errors = []

    def run():
        try:
            found = probe()
            if found:
                FOUND[probe.__name__] = found
        except Exception as e:  # handed to the caller's thread; a name gone is as broken
            errors.append(e if isinstance(e, _Broken) else
                          _broken(f"{probe.__name__} failed: {type(e).__name__}: {e}"))
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]


# Process-wide patches (a Keras module's functions, a TensorFlow class's attribute) are made
# and undone under this lock, so that threads entering and leaving them never interleave.
_patch_lock = threading.Lock()


def _found_by(probe):
    """What `probe` found (running it the first time in this process)."""
    if probe not in _passed:
        _in_a_fresh_thread(probe)
        _passed.add(probe)
    return FOUND[probe.__name__]
