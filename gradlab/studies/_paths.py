"""Per-user directories by the XDG Base Directory rule, so nothing is written beside the package.

    $XDG_CACHE_HOME/gradlab  (default ~/.cache/gradlab)        results gradlab can recompute
    $XDG_DATA_HOME/gradlab   (default ~/.local/share/gradlab)  data the user puts there

An installed gradlab lives in site-packages, which may be read-only or shared; a directory
beside the package is only right in a checkout, and the Makefile says so explicitly.
"""
from __future__ import annotations

import os
from pathlib import Path

_DEFAULTS = {"XDG_CACHE_HOME": ".cache", "XDG_DATA_HOME": ".local/share"}


def env_path(variable):
    """`Path($variable)` with `~` expanded if the variable is set and non-empty, else None.

    Args:
        variable: the environment variable's name, e.g. "GRADLAB_CACHE".
    Returns:
        a Path, or None when the variable is unset or empty.
    """
    value = os.environ.get(variable, "")
    return Path(value).expanduser() if value else None


def user_dir(variable):
    """`$variable/gradlab` when it holds an absolute path, else `~/<XDG default>/gradlab`.

    The XDG rule ignores a relative path in these variables, as if they were unset.

    Args:
        variable: "XDG_CACHE_HOME" or "XDG_DATA_HOME".
    Returns:
        the Path of gradlab's directory there (not created).
    """
    if variable not in _DEFAULTS:
        raise ValueError(f"variable must be one of {', '.join(map(repr, _DEFAULTS))}, "
                         f"got {variable!r}")
    base = os.environ.get(variable, "")
    if not os.path.isabs(base):
        base = Path.home() / _DEFAULTS[variable]
    return Path(base) / "gradlab"
