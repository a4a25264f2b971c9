"""What a bug report needs: `python -m gradlab doctor [--json]`.

    versions   python, tensorflow, keras, numpy, gradlab (and where it is installed, and the
               range CI tests)
    devices    physical and logical, CPU and GPU
    xla        a jit_compile=True function runs, and on which device
    allocator  whether GPU:0's allocator reports its peak (what `bench --fit --memory` reads)
    probes     every private Keras/TensorFlow name gradlab relies on, probed now: ok, or
               failed with the reason; where Keras versions differ, the variant found

Exit status 1 if a probe failed (gradlab refuses to run what relies on it), else 0.
`probe_line(name)` runs one probe and returns its line (lesson 16 prints the hook's).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys


def report():
    """Everything `doctor` prints, as a JSON-ready dict (starts TensorFlow's runtime)."""
    import keras
    import numpy as np
    import tensorflow as tf

    import gradlab
    from gradlab import _compat

    versions = dict(python=platform.python_version(), tensorflow=tf.__version__,
                    keras=keras.__version__, numpy=np.__version__, gradlab=gradlab.__version__)
    devices = dict(physical=[f"{d.device_type}: {d.name}" for d in tf.config.list_physical_devices()],
                   logical=[d.name for d in tf.config.list_logical_devices()])
    probes = _probes()
    return dict(versions=versions, location=os.path.dirname(gradlab.__file__),
                tested=_compat.TESTED, devices=devices, xla=_xla(tf),
                allocator=_allocator(tf), probes=probes)


def _xla(tf):
    try:
        twice = tf.function(lambda x: 2.0 * x + 1.0, jit_compile=True)
        value = twice(tf.constant([1.0]))
        ok = value.numpy().tolist() == [3.0]
        return dict(ok=ok, detail=f"a jit_compile=True function ran on {value.device}"
                    + ("" if ok else f" and returned {value.numpy().tolist()}, not [3.0]"))
    except Exception as e:  # any refusal is the answer: XLA is not usable here
        return dict(ok=False, detail=f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")


def _allocator(tf):
    if not tf.config.list_physical_devices("GPU"):
        return dict(ok=False, detail="no GPU; on a CPU `bench --fit --memory` reads TensorFlow's "
                                     "BFC allocator (it sets TF_CPU_ALLOCATOR_USE_BFC=true)")
    try:
        info = tf.config.experimental.get_memory_info("GPU:0")
        return dict(ok=True, detail=f"GPU:0 reports its peak: {info['current'] / 2**20:.1f} MB held, "
                                    f"peak {info['peak'] / 2**20:.1f} MB")
    except (ValueError, tf.errors.OpError) as e:
        return dict(ok=False, detail=f"GPU:0 keeps no statistics: {e}")


def render(found):
    """The report as text, one fact a line."""
    lines = ["versions"] + [f"  {k:<11} {v}" for k, v in found["versions"].items()]
    lines += [f"  location    {found['location']}",
              f"  (CI tests the range's ends: {found['tested']})", "devices"]
    lines += [f"  physical    {d}" for d in found["devices"]["physical"]]
    lines += [f"  logical     {d}" for d in found["devices"]["logical"]]
    for key in ("xla", "allocator"):
        state = "available" if found[key]["ok"] else "not available"
        lines.append(f"{key:<13} {state}: {found[key]['detail']}")
    lines.append("probes")
    lines += [_probe_line(p) for p in found["probes"]]
    failed = sum(not p["ok"] for p in found["probes"])
    lines.append(f"{len(found['probes']) - failed} probes ok, {failed} failed")
    return "\n".join(lines)


def _probe_line(p):
    what = ", ".join(p["names"]) or "(a behaviour, no private name)"
    if p["ok"]:
        return f"  ok      {p['probe']}: {what}" + (f" -- {p['found']}" if p["found"] else "")
    return f"  FAILED  {p['probe']}: {what} -- {p['error']}"


def probe_line(name):
    """The line `doctor` prints for the probe of the private `name` (a key of gradlab's
    `PRIVATE_NAMES`), that probe run now: "ok      _probe_all_reduce: _all_reduce_sum_gradients",
    or "FAILED  ... -- the reason". Lesson 16 prints it."""
    return _probe_line(_probes(only=name)[0]).strip()


def _probes(only=None):
    from gradlab import _compat

    return [dict(probe=probe, names=names, ok=error is None, found=_compat.FOUND.get(probe), error=error)
            for probe, names, error in _compat.probe_report(only)]


def cli(argv=None):
    parser = argparse.ArgumentParser(prog="python -m gradlab doctor", description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = parser.parse_args(argv)
    found = report()
    print(json.dumps(found, indent=1) if args.json else render(found))
    return 1 if any(not p["ok"] for p in found["probes"]) else 0


if __name__ == "__main__":
    sys.exit(cli())
