"""`cluster_worker`: the command that starts a worker, the global batches every process reads
alike, and a result file written whole."""
import sys
from argparse import Namespace

import numpy as np

from gradlab.studies.distributed import cluster_worker


def test_command_runs_this_module_with_the_run_s_arguments():
    assert cluster_worker.command(1, 3, 2, 63, 120.0, "/tmp/x", fail=True, fit=True) == [
        sys.executable, "-m", "gradlab.studies.distributed.cluster_worker", "--worker", "1",
        "--accum-steps", "3", "--updates", "2", "--batch", "63", "--timeout", "120.0",
        "--out", "/tmp/x", "--fail", "--fit"]
    assert cluster_worker.command(0, 3, 2, 63, 120.0, "/tmp/x")[-2:] == ["--out", "/tmp/x"]


def test_global_batch_u_is_the_u_th_slice_of_the_training_set():
    data = cluster_worker.training_data()
    x, y = cluster_worker.global_batch(data, 2, 10)
    np.testing.assert_array_equal(x, data.x_train[20:30])
    np.testing.assert_array_equal(y, data.y_train[20:30])


def test_save_writes_the_result_under_the_worker_s_name(tmp_path):
    args = Namespace(out=str(tmp_path), worker=1)
    weights = [np.ones((2, 2)), np.arange(3.0)]
    assert cluster_worker.save(args, [0.5, 0.25], 31, 1.0, weights) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["worker1.npz"]  # no temporary left
    saved = dict(np.load(tmp_path / "worker1.npz"))
    assert saved["losses"].tolist() == [0.5, 0.25] and int(saved["examples"]) == 31
    np.testing.assert_array_equal(saved["w1"], weights[1])
