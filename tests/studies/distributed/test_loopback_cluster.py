"""`loopback_cluster`: worker processes started in their own sessions, the first to fail named,
and nothing left running on any exit."""
import json
import os
import sys
import time
import uuid
from pathlib import Path

import pytest

from gradlab.studies.distributed import loopback_cluster as cluster
from gradlab.studies.distributed.multiworker import run

# Inherited by every worker the test starts, so it can find them (and only them).
MARK = f"GRADLAB_TEST_MARK={uuid.uuid4().hex}".encode()


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


def python(code):
    return [sys.executable, "-c", code]


def run_failing(codes, tmp_path, env):
    """Start one worker per code, `wait` for them (a WorkerError expected), stop them all."""
    logs = [open(Path(tmp_path) / f"worker{k}.log", "wb") for k in range(len(codes))]
    procs = [cluster.start(python(code), env, log) for code, log in zip(codes, logs)]
    try:
        with pytest.raises(cluster.WorkerError) as failure:
            cluster.wait(procs, logs, time.monotonic() + 30, 30)
    finally:
        cluster.stop(procs)
        for log in logs:
            log.close()
    return procs, failure


def test_ports_are_distinct_and_every_worker_gets_its_own_task():
    ports = cluster.free_ports(3)
    assert len(set(ports)) == 3 and all(0 < p < 65536 for p in ports)
    addresses = [f"127.0.0.1:{p}" for p in ports]
    env = cluster.worker_env(addresses, 2)
    assert json.loads(env["TF_CONFIG"]) == {"cluster": {"worker": addresses},
                                            "task": {"type": "worker", "index": 2}}
    assert env["CUDA_VISIBLE_DEVICES"] == ""


def test_the_first_worker_to_fail_is_named_and_the_rest_are_stopped(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADLAB_TEST_MARK", MARK.split(b"=")[1].decode())
    codes = ["import time; time.sleep(60)",                           # blocked, as in an all-reduce
             "import sys; print('boom from worker 1'); sys.exit(3)"]  # fails at once
    start = time.monotonic()
    procs, failure = run_failing(codes, tmp_path, dict(os.environ))
    assert failure.value.worker == 1
    assert str(failure.value) == "worker 1 of 2 failed with exit code 3"
    assert failure.value.stderr_tail == "  | boom from worker 1"
    assert time.monotonic() - start < 15
    assert procs[0].poll() is not None and processes_started_here() == []


def test_the_worker_that_said_it_failed_first_is_named_though_a_peer_exits_before_it(tmp_path):
    # Worker 0 fails first but exits late (as a TensorFlow worker whose sockets close before it is
    # reaped); worker 1 fails 0.1 s later, in consequence, and exits at once: the logged times decide
    say = "import sys, time; from gradlab.studies.distributed.loopback_cluster import say_failed; "
    codes = [say + "say_failed(sys.stderr); time.sleep(0.6); sys.exit(1)",
             say + "time.sleep(0.1); say_failed(sys.stderr); sys.exit(2)"]
    env = {**os.environ, "PYTHONPATH": str(Path(cluster.__file__).parents[3])}
    procs, failure = run_failing(codes, tmp_path, env)
    assert procs[1].returncode == 2 and procs[0].returncode == 1  # 1 exited first, with 2
    assert str(failure.value) == "worker 0 of 2 failed with exit code 1 (then worker(s) [1] too)"
    assert failure.value.worker == 0 and failure.value.stderr_tail.startswith("  | worker failed at ")


def test_a_worker_past_the_deadline_times_out(tmp_path):
    log = open(Path(tmp_path) / "worker0.log", "wb")
    procs = [cluster.start(python("import time; time.sleep(60)"), dict(os.environ), log)]
    try:
        with pytest.raises(cluster.WorkerError, match=r"timed out after 0.5 s: worker\(s\) \[0\]"):
            cluster.wait(procs, [log], time.monotonic() + 0.5, 0.5)
    finally:
        cluster.stop(procs)
        log.close()
    assert procs[0].poll() is not None


@pytest.mark.slow
def test_failing_worker_is_reported_and_nothing_hangs(monkeypatch):
    # In-process `run` (the CLI's engine): spares a third TensorFlow start-up.
    monkeypatch.setenv("GRADLAB_TEST_MARK", MARK.split(b"=")[1].decode())
    start = time.monotonic()
    with pytest.raises(cluster.WorkerError) as failure:
        run(workers=2, accum_steps=2, updates=2, batch=16, timeout=100, fail_worker=1)
    assert failure.value.worker == 1
    assert str(failure.value).startswith("worker 1 of 2 failed with exit code 1")
    assert "failing on purpose" in failure.value.stderr_tail  # the worker's own traceback
    # Worker 0 was blocked in an all-reduce with the dead worker: stopped, not waited for.
    assert time.monotonic() - start < 60
    assert processes_started_here() == []
