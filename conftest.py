"""nbval settings for the lessons (notebooks/*.ipynb): compare stdout and results, never stderr.

TensorFlow's C++ runtime and tqdm write to stderr with timestamps and timings that cannot
repeat; the results a lesson proves are printed to stdout or returned, where nbval checks them.
"""
try:
    import nbval.plugin as _nbval
except ImportError:  # an environment without the [test] extra (the oldest pair's): no lessons to check
    _nbval = None


def _without_stderr(outputs):
    return _coalesce([o for o in outputs
                      if not (o.get("output_type") == "stream" and o.get("name") == "stderr")])


if _nbval is not None:
    _coalesce = _nbval.coalesce_streams
    _nbval.coalesce_streams = _without_stderr
