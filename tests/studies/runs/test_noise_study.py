"""The noise study: the JSON of `python -m gradlab noise`, cached, and its bad arguments."""
import json

import pytest

from gradlab.studies.runs import noise, noise_study, run_result
from gradlab.studies.cache import ResultCache


@pytest.mark.slow
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
    config = noise_study.NoiseConfig((1, 2), 3, 4, draws=4, warmup=2, loss_updates=8, examples=40)
    for r in report["fixed_micro_batch"] + report["fixed_effective_batch"]:
        assert r["predicted_variance"] == pytest.approx(report["trace_cov"] / r["effective_batch"])
        # 4 draws: the measured variance is tr(S)/B within its standard error, the mean
        # cosine near 1/sqrt(1 + B_simple/B) (an approximation of the mean)
        assert abs(r["grad_variance"] - r["predicted_variance"]) < 3 * r["grad_variance_sem"]
        assert r["cosine"] == pytest.approx(r["predicted_cosine"], abs=0.1)
        run = run_result.cached_result(ResultCache(tmp_path), config._run(
            r["accum_steps"], r["micro_batch"], 8, config.loss_lr))
        assert r["train_loss_noise_var"] == pytest.approx(noise.loss_noise(run.losses).var)
    assert set(report["slopes"]) >= {"grad_variance"}
    assert report["two_batch"]["b_small"] == 3 and report["two_batch"]["b_big"] == 6
    noise_study.cli(argv)  # the second time from the cache: the same object
    assert json.loads(capsys.readouterr().out) == report
    with pytest.raises(SystemExit):
        noise_study.cli(["--accum", "3", "--effective-batch", "4"])
    assert "at least 2 different counts" in capsys.readouterr().err
