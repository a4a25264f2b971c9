"""The noise study: the JSON of `python -m gradlab noise`, cached, and its bad arguments."""
import json

import pytest

from gradlab import noise_study


def test_noise_cli_json(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GRADLAB_CACHE", str(tmp_path))
    argv = ["--accum", "1,2", "--micro-batch", "3", "--effective-batch", "4", "--draws", "4",
            "--warmup", "2", "--loss-updates", "8", "--examples", "40", "--json", "--no-progress"]
    assert noise_study.cli(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["point"]["warmup_updates"] == 2 and report["point"]["examples"] == 40
    assert report["noise_scale"] == pytest.approx(report["trace_cov"] / report["grad_sq_norm"])
    assert [(r["accum_steps"], r["micro_batch"]) for r in report["fixed_micro_batch"]] == [(1, 3), (2, 3)]
    assert [(r["accum_steps"], r["micro_batch"]) for r in report["fixed_effective_batch"]] == [(1, 4), (2, 2)]
    for r in report["fixed_micro_batch"] + report["fixed_effective_batch"]:
        assert r["predicted_variance"] == pytest.approx(report["trace_cov"] / r["effective_batch"])
        assert r["grad_variance"] > 0 and -1.0 <= r["cosine"] <= 1.0
        assert r["train_loss_noise_var"] is not None
    assert set(report["slopes"]) >= {"grad_variance"}
    assert report["two_batch"]["b_small"] == 3 and report["two_batch"]["b_big"] == 6
    noise_study.cli(argv)  # the second time from the cache: the same object
    assert json.loads(capsys.readouterr().out) == report
    with pytest.raises(SystemExit):
        noise_study.cli(["--accum", "3", "--effective-batch", "4"])
    assert "at least 2 different counts" in capsys.readouterr().err
