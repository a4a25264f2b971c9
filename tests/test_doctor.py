"""`python -m gradlab doctor`: the versions, devices and probes a bug report needs, read back."""
import json
import pathlib
import platform

import keras
import numpy as np
import pytest
import tensorflow as tf

import gradlab
from gradlab import _compat, doctor
from gradlab.__main__ import main
from common import DEVICES


def test_doctor_names_the_versions_devices_and_every_probe(capsys):
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out.splitlines()
    for name, version in [("python", platform.python_version()), ("tensorflow", tf.__version__),
                          ("keras", keras.__version__), ("numpy", np.__version__),
                          ("gradlab", gradlab.__version__)]:
        assert f"  {name:<11} {version}" in out
    assert f"  location    {pathlib.Path(gradlab.__file__).parent}" in out
    for device in DEVICES:  # the session's two logical devices (tests/common.py)
        assert f"  logical     {device}" in out
    assert any(line.startswith("xla           available: ") for line in out)
    probes = {p.__name__ for p in [*_compat.PRIVATE_NAMES.values(), *_compat.BEHAVIOURS]}
    assert {line.split()[1].rstrip(":") for line in out if line.startswith("  ok      ")} == probes
    assert out[-1] == f"{len(probes)} probes ok, 0 failed"
    # where Keras versions differ, the line says which variant this Keras has
    fit_hooks, = [line for line in out if "_probe_fit_hooks" in line]
    minor = tuple(int(v) for v in keras.__version__.split(".")[:2])
    assert fit_hooks.endswith(_compat.EPOCH_ITEMS[2 if minor < (3, 11) else 3])


def test_doctor_json_is_the_report(capsys):
    assert doctor.cli(["--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["versions"]["tensorflow"] == tf.__version__ and found["tested"] == _compat.TESTED
    assert all(p["ok"] and p["error"] is None for p in found["probes"])
    assert found["allocator"]["ok"] == bool(tf.config.list_physical_devices("GPU"))


def test_a_failed_probe_is_named_with_its_reason_and_fails_the_exit_status(monkeypatch, capsys):
    monkeypatch.delattr(keras.layers.BatchNormalization, "_moments")
    assert doctor.cli([]) == 1
    out = capsys.readouterr().out.splitlines()
    failed, = [line for line in out if line.startswith("  FAILED  ")]
    assert failed.startswith("  FAILED  _probe_moments: _moments -- ")
    assert f"(keras {keras.__version__}, tensorflow {tf.__version__})" in failed
    assert out[-1].endswith(", 1 failed")


def test_bad_arguments_are_refused_before_any_work(capsys):
    with pytest.raises(SystemExit) as raised:
        doctor.cli(["--bogus"])
    assert raised.value.code == 2 and "--bogus" in capsys.readouterr().err


def test_probe_line_is_doctors_line_for_one_private_name(monkeypatch):
    line = doctor.probe_line("_all_reduce_sum_gradients")
    assert line == "ok      _probe_all_reduce: _all_reduce_sum_gradients"
    assert doctor.probe_line("_var_key") == "ok      _probe_variable_index: _var_key, _trainable_variables_indices"
    # a Keras whose apply no longer calls the method: the probe fails, and the line gives the reason
    monkeypatch.setattr(keras.optimizers.SGD, "_backend_update_step", lambda self, *args, **kwargs: None)
    failed = doctor.probe_line("_all_reduce_sum_gradients")
    assert failed.startswith("FAILED  _probe_all_reduce: _all_reduce_sum_gradients -- "), failed
    with pytest.raises(KeyError):
        doctor.probe_line("_not_a_name_gradlab_uses")
