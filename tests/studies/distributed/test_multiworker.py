"""`python -m gradlab multiworker`: worker processes on loopback, each accumulating its shard,
equal to one large batch; bad arguments and a failing worker are reported (the processes
themselves: test_loopback_cluster.py)."""
import json
import subprocess
import sys
import time

import pytest

from gradlab.studies.distributed import multiworker
from gradlab.studies.distributed.multiworker import WorkerError, check_args, cli, format_result


def run_cli(*args, timeout=150):
    cmd = [sys.executable, "-m", "gradlab", "multiworker", *args]
    start = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return done, time.monotonic() - start


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


def test_the_report_names_the_reference_and_the_largest_difference():
    result = {"workers": 2, "accum_steps": 3, "updates": 2, "batch": 63, "shards": [32, 31],
              "all_reduces_per_update": 1.0, "max_abs_diff": 1.25e-7, "seconds": 12.34}
    assert format_result(result).splitlines() == [
        "2 workers x accum_steps=3: 2 updates of 63 MNIST examples, shards 32+31, "
        "all-reduces per update: 1",
        "max |weights(workers) - weights(large_batch)| = 1.25e-07   (12.3 s)"]
    assert format_result(result, fit=True).startswith("AccumulatingModel.fit, 2 workers")
    assert "weights(plain fit)" in format_result(result, fit=True)
