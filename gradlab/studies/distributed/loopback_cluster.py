"""K worker processes on 127.0.0.1: started with their TF_CONFIG, waited for, always stopped.

    worker k:  TF_CONFIG = {"cluster": {"worker": [127.0.0.1:p_0, ...]},
                            "task": {"type": "worker", "index": k}}

Each worker runs in its own session (process group) with its output in a log file. `wait`
returns when every worker exited 0 and raises `WorkerError` as soon as one fails (naming the
first to fail: its peers then fail too, blocked in an all-reduce with it) or the deadline
passes; `stop` kills every process group still running, which `multiworker.run` does on any
exit (success, failure, timeout, Ctrl-C).

Lesson: notebooks/14-communication.ipynb
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path


class WorkerError(RuntimeError):
    """A worker failed or timed out; `worker` is its index (None: several, on timeout)."""

    def __init__(self, message, worker=None, stderr_tail=""):
        super().__init__(message)
        self.worker, self.stderr_tail = worker, stderr_tail


def free_ports(n):
    """`n` distinct free TCP ports on 127.0.0.1 (all held open until all are chosen)."""
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def worker_env(addresses, k):
    """This process's environment with worker `k`'s TF_CONFIG in the cluster `addresses`."""
    env = dict(os.environ)
    env["TF_CONFIG"] = json.dumps({"cluster": {"worker": addresses},
                                   "task": {"type": "worker", "index": k}})
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env["CUDA_VISIBLE_DEVICES"] = ""  # K processes sharing one GPU would fight over its memory
    return env


def start(cmd, env, log):
    """Run `cmd` with its output (stdout and stderr) in the open file `log`."""
    # Own session: the whole process group can be killed, and Ctrl-C in a terminal
    # reaches only the parent, which then stops the workers itself.
    return subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)


FAILED_AT = "worker failed at"  # a failing worker's log line, before its traceback: time.time()


def say_failed(stream):
    """Write FAILED_AT and the wall-clock time to `stream`: call first thing when a worker fails."""
    print(f"{FAILED_AT} {time.time():.6f}", file=stream, flush=True)


def failed_at(log):
    """The time the worker writing `log` said it failed (`say_failed`), or None."""
    log.flush()
    for line in Path(log.name).read_text(errors="replace").splitlines():
        if line.startswith(FAILED_AT):
            return float(line.split()[-1])
    return None


def wait(procs, logs, deadline, timeout):
    """Until every worker exits 0; a WorkerError as soon as one fails or time runs out.

    When one worker dies, its peers fail too, blocked in an all-reduce with it, and may exit
    before it does (its sockets close before the parent sees it exit). The report names the
    worker that failed first: by the times the workers logged (`say_failed`) where every failed
    worker logged one, else by exit times, which a watcher thread per worker records.
    """
    exits = {}  # worker index -> (time of exit, exit code)

    def watch(k, p):
        code = p.wait()
        exits[k] = (time.monotonic(), code)

    for k, p in enumerate(procs):
        threading.Thread(target=watch, args=(k, p), daemon=True).start()
    while True:
        if any(code != 0 for _, code in list(exits.values())):
            time.sleep(0.2)  # peers failing in consequence: recorded, not reported as first
            said = {k: failed_at(log) for k, log in enumerate(logs)}
            failed = {k for k, (_, code) in list(exits.items()) if code != 0}
            failed |= {k for k, t in said.items() if t is not None}
            if all(said[k] is not None for k in failed):
                order = sorted(failed, key=lambda k: (said[k], k))
            else:
                order = sorted(failed, key=lambda k: (exits.get(k, (float("inf"),))[0], k))
            k, then = order[0], order[1:]
            try:
                procs[k].wait(10)  # it said it failed: its exit follows at once
            except subprocess.TimeoutExpired:
                pass  # reported with exit code None; `stop` kills it
            also = f" (then worker(s) {then} too)" if then else ""
            raise WorkerError(f"worker {k} of {len(procs)} failed with exit code {procs[k].returncode}"
                              f"{also}", k, tail(logs[k]))
        if len(exits) == len(procs):
            return
        if time.monotonic() > deadline:
            running = [k for k in range(len(procs)) if k not in exits]
            tails = [f"worker {k}:\n{tail(logs[k])}" for k in running if tail(logs[k])]
            raise WorkerError(f"timed out after {timeout:g} s: worker(s) {running} still running",
                              running[0] if len(running) == 1 else None, "\n".join(tails))
        time.sleep(0.05)


def tail(log, lines=15):
    """The last `lines` lines of the worker log `log`, indented as a quote."""
    log.flush()
    text = Path(log.name).read_text(errors="replace").strip().splitlines()
    return "\n".join(f"  | {line}" for line in text[-lines:])


def stop(procs):
    """SIGTERM every worker's process group still running, then SIGKILL after 3 s."""
    alive = [p for p in procs if p.poll() is None]
    for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
        for p in alive:
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass
        end = time.monotonic() + grace
        for p in alive:
            try:
                p.wait(max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        alive = [p for p in alive if p.poll() is None]
        if not alive:
            return


def exit_on_sigterm(signum, frame):
    """A SIGTERM handler that raises SystemExit, so that `finally` blocks (`stop`) run."""
    raise SystemExit(128 + signum)
