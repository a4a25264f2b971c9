"""`python -m gradlab multiworker`: worker processes on loopback, each accumulating its shard,
equal to one large batch; a failing worker is reported and nothing is left running."""
import json
import os
import subprocess
import sys
import time
import uuid

import pytest

from gradlab.studies import multiworker
from gradlab.studies.multiworker import WorkerError, check_args, cli, run


# Inherited by every worker the CLI starts, so this test can find them (and only them).
MARK = f"GRADLAB_TEST_MARK={uuid.uuid4().hex}".encode()


def run_cli(*args, timeout=150):
    cmd = [sys.executable, "-m", "gradlab", "multiworker", *args]
    env = dict(os.environ, GRADLAB_TEST_MARK=MARK.split(b"=")[1].decode())
    start = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    return done, time.monotonic() - start


def processes_started_here():
    """Pids of live processes whose environment carries this test session's MARK."""
    alive = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if MARK in f.read().split(b"\0"):
                    alive.append(int(pid))
        except OSError:
            continue
    return alive


@pytest.mark.slow
def test_two_workers_equal_one_large_batch():
    done, _ = run_cli("--workers", "2", "--accum-steps", "3", "--batch", "63", "--updates", "2",
                      "--timeout", "120", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["workers"] == 2 and result["accum_steps"] == 3
    assert result["shards"] == [32, 31]  # each worker its own part of every global batch
    assert result["all_reduces_per_update"] == 1
    assert result["max_abs_diff"] < 1e-5
    assert result["max_loss_diff"] < 1e-5  # every worker reports the global mean loss


@pytest.mark.slow
def test_failing_worker_is_reported_and_nothing_hangs(monkeypatch):
    # In-process `run` (the CLI's engine): spares a third TensorFlow start-up.
    monkeypatch.setenv("GRADLAB_TEST_MARK", MARK.split(b"=")[1].decode())
    start = time.monotonic()
    with pytest.raises(WorkerError) as failure:
        run(workers=2, accum_steps=2, updates=2, batch=16, timeout=100, fail_worker=1)
    assert failure.value.worker == 1
    assert str(failure.value).startswith("worker 1 of 2 failed with exit code 1")
    assert "failing on purpose" in failure.value.stderr_tail  # the worker's own traceback
    # Worker 0 was blocked in an all-reduce with the dead worker: stopped, not waited for.
    assert time.monotonic() - start < 60
    assert processes_started_here() == []


def test_cli_reports_a_failing_worker_as_json(monkeypatch, capsys):
    def fail(*args):
        raise WorkerError("worker 1 of 2 failed with exit code 1", 1, "  | RuntimeError: boom")
    monkeypatch.setattr(multiworker, "run", fail)
    assert cli(["--workers", "2", "--accum-steps", "2", "--json"]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out.strip().splitlines()[-1]) == {
        "workers": 2, "accum_steps": 2, "error": "worker 1 of 2 failed with exit code 1",
        "failed_worker": 1}
    assert "RuntimeError: boom" in err


@pytest.mark.parametrize("args, error, message", [
    (dict(workers=0), ValueError, "workers must be an integer >= 1, got 0"),
    (dict(accum_steps=0), ValueError, "accum_steps must be an integer >= 1, got 0"),
    (dict(updates=0), ValueError, "updates must be an integer >= 1, got 0"),
    (dict(batch=5), ValueError, "batch must be at least workers \\* accum_steps = 6.*got 5"),
    (dict(updates=100, batch=64), ValueError, "at most 4000.*100 \\* 64 = 6400"),
    (dict(timeout=0), ValueError, "timeout must be a positive number of seconds.*got 0"),
    (dict(timeout=float("inf")), ValueError, "at most 86400, got inf"),  # alarm: OverflowError
    (dict(timeout=1e10), ValueError, "at most 86400, got 10000000000.0"),
    (dict(timeout=float("nan")), ValueError, "got nan"),
    (dict(timeout="10"), TypeError, "timeout must be a number of seconds, got '10' \\(str\\)"),
    (dict(fail_worker=2), ValueError, "fail_worker must be a worker index in 0..1, got 2"),
    (dict(fail_worker=True), TypeError, "fail_worker must be a worker index or None, got True"),
    (dict(fail_worker=0.0), TypeError, "fail_worker must be a worker index or None, got 0.0"),
    (dict(workers=1.5), TypeError, "workers must be a positive integer, got 1.5"),
])
def test_bad_arguments_are_named(args, error, message):
    full = dict(workers=2, accum_steps=3, updates=3, batch=64, timeout=10, fail_worker=None)
    full.update(args)
    with pytest.raises(error, match=message):
        check_args(**full)


def test_cli_rejects_bad_arguments_before_starting_anything(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli(["--workers", "2", "--accum-steps", "3", "--batch", "5"])
    assert exit_.value.code == 2
    assert "batch must be at least workers * accum_steps = 6 " in capsys.readouterr().err
