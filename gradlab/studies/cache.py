"""A result cache on disk: one JSON file per configuration, so a finished run is never rerun.

    key  = sha256(canonical JSON of {"config": config, "version": gradlab.__version__})
    path = <root>/<key[:2]>/<key>.json,   root = $GRADLAB_CACHE, else $XDG_CACHE_HOME/gradlab
                                                 (default ~/.cache/gradlab)

The root is the user's cache directory, never beside the package: an installed gradlab
lives in site-packages. The repository's Makefile sets GRADLAB_CACHE=<repo>/.gradlab-cache,
so `make lab`, `make table` and the tests keep their results in the checkout.

A new gradlab version is a new key (old entries are simply never read again). Entries are
written to a temporary file and `os.replace`d into place, so an interrupted run leaves no
half-written entry; an entry that cannot be read is reported with `warnings.warn`,
deleted, and recomputed.

Lesson: notebooks/21-reproducing-the-table.ipynb
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import tempfile
import warnings
from pathlib import Path

from ._paths import env_path, user_dir

_ENV_VAR = "GRADLAB_CACHE"


def cache_root():
    """`Path($GRADLAB_CACHE)` if set and non-empty, else `$XDG_CACHE_HOME/gradlab` (~/.cache/gradlab)."""
    return env_path(_ENV_VAR) or user_dir("XDG_CACHE_HOME")


def canonical_json(obj):
    """One spelling per value: sorted keys, no spaces, NaN and infinity refused."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def cache_key(config, version=None):
    """sha256 hex digest of the canonical JSON of `config` (a JSON-able dict) and the version.

    Args:
        config: a dict of JSON values describing the computation completely.
        version: defaults to `gradlab.__version__`, read at call time.
    """
    if not isinstance(config, dict):
        raise TypeError(f"config must be a dict of JSON values, got {type(config).__name__}")
    if version is None:
        import gradlab  # at call time, so that a new version is a new key
        version = gradlab.__version__
    return hashlib.sha256(canonical_json({"config": config, "version": version})
                          .encode()).hexdigest()


class ResultCache:
    """`get(config)` -> the stored result dict or None; `put(config, result)` stores it.

    Args:
        root: the cache directory (created on first `put`); default `cache_root()`.
        enabled: False makes `get` always miss and `put` do nothing (`--no-cache`).
    """

    def __init__(self, root=None, enabled=True):
        if root is not None and not isinstance(root, (str, os.PathLike)):
            raise TypeError(f"root must be a path or None, got {root!r}")
        self.root = Path(root) if root is not None else cache_root()
        self.enabled = bool(enabled)

    def check_writable(self):
        """Raise `OSError` naming the root unless an entry could be written there now (does
        nothing when disabled): a caller that trains before its first `put` learns of an
        unusable cache (a symlink loop, a read-only directory) before the work, not after."""
        if not self.enabled:
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=self.root):
                pass
        except OSError as e:
            raise OSError(f"gradlab's result cache {str(self.root)!r} cannot be written "
                          f"({type(e).__name__}: {e}); set ${_ENV_VAR} to a writable directory, "
                          "or pass cache=False") from e

    def path(self, config):
        key = cache_key(config)
        return self.root / key[:2] / f"{key}.json"

    def get(self, config):
        """The cached result for `config`, or None on a miss or an unreadable entry."""
        if not self.enabled:
            return None
        path = self.path(config)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:  # ValueError: UnicodeDecodeError, bytes not UTF-8
            return self._discard(path, e)
        try:
            entry = json.loads(text)
            # The stored config guards against a truncated or foreign file with a valid name.
            if entry["key"] != path.stem or entry["config"] != config:
                raise ValueError("its key or config does not match its file name")
            return entry["result"]
        except (ValueError, KeyError, TypeError) as e:
            return self._discard(path, e)

    def put(self, config, result):
        """Store `result` (a dict of JSON values) for `config`, atomically; returns the path."""
        if not self.enabled:
            return None
        path = self.path(config)
        text = canonical_json({"key": path.stem, "config": config, "result": result})
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide it from others sharing the cache
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return path

    def _discard(self, path, error):
        warnings.warn(f"discarding unreadable gradlab cache entry {path} "
                      f"({type(error).__name__}: {error}); it will be recomputed",
                      RuntimeWarning, stacklevel=3)
        with contextlib.suppress(OSError):
            path.unlink()
        return None

    def __repr__(self):
        return f"ResultCache({str(self.root)!r}, enabled={self.enabled})"


def jsonable(value):
    """`value` with numpy scalars and arrays made plain Python (lists, ints, floats)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN; a diverged loss is stored as null
    return value


def to_json(value):
    """Strict JSON of `jsonable(value)` (NaN and infinity as null): what every `--json` prints."""
    return json.dumps(jsonable(value), allow_nan=False)
