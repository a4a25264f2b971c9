"""The accumulation table: configs checked before running, the text beside the reference,
and the JSON of `python -m gradlab table` (strict, cached, and recomputed with --no-cache)."""
import json
import math

import numpy as np
import pytest

from gradlab.studies.runs import run_config, run_result, table
from gradlab.studies.cache import ResultCache
from gradlab.studies.stats import anova, mean_std, pooled_t, welch_t


def test_table_configs_check_divisibility_before_running():
    with pytest.raises(ValueError, match=r"effective batch 100 is not divisible by accumulation count\(s\) \[3, 7\]"):
        table.table_configs([1, 3, 5, 7], effective_batch=100)
    with pytest.raises(ValueError, match=r"each accumulation count once, got \[1, 1\]"):
        table.table_configs([1, 1], micro_batch=8)
    rows = table.table_configs([1, 4], micro_batch=8, runs=2, updates=5, seed=10)
    assert [[(c.accum_steps, c.micro_batch, c.seed) for c in row] for row in rows] == \
        [[(1, 8, 10), (1, 8, 11)], [(4, 8, 10), (4, 8, 11)]]


def test_format_table_shows_the_reference_beside_matching_rows():
    runs = {1: [0.949, 0.953], 5: [0.948, 0.951], 20: [0.939, 0.941]}
    p_values = pooled_t(list(runs.values()))
    rows = [{"accum_steps": n, "micro_batch": 100 // n, "effective_batch": 100, "updates": 1000,
             "iterations": 1000 * n, "runs": 2, "accuracies": accs,
             "accuracy_mean": mean_std(accs)[0], "accuracy_std": mean_std(accs)[1],
             "seconds_per_run": 3.0, "loss_noise_var": 0.0025,
             "p_value": None if p is None else p[2], "model": "mlp",
             "optimizer": "sgd", "lr": 0.5, "sampling": "independent", "strategy": "fused"}
            for (n, accs), p in zip(runs.items(), p_values)]
    text = table.format_table(rows)
    lines = text.splitlines()
    assert "mlp, sgd lr=0.5, fused strategy, independent sampling" in lines[0]
    assert "fixed effective batch 100" in lines[0]
    assert lines[4].split() == ["1", "100", "100", "1,000", "95.10", "±", "0.28", "-", "0.050",
                                "3.0", "95.0", "±", "0.17"]
    assert "95.2 ± 0.30" in lines[6]
    f, _, _, p = anova(list(runs.values()))
    assert f"F = {f:.2f}, p = {p:.3f}: the rows differ beyond run-to-run noise" in text
    assert "largest |difference| from N=1: 1.10 points" in text
    assert "accuracy %: final test accuracy, mean ± sample std (ddof = 1) over the 2 run(s)" in text
    # tests=False: the same rows and spreads, without the p column and the tests' lines.
    plain = table.format_table(rows, tests=False)
    assert plain.splitlines()[4].split() == ["1", "100", "100", "1,000", "95.10", "±", "0.28",
                                             "0.050", "3.0", "95.0", "±", "0.17"]
    assert "p vs first" not in plain and "ANOVA" not in plain
    assert "largest |difference| from N=1: 1.10 points" in plain
    # seconds=False: the same row without the one column that changes between runs.
    steady = table.format_table(rows, tests=False, seconds=False)
    assert steady.splitlines()[4].split() == ["1", "100", "100", "1,000", "95.10", "±", "0.28",
                                              "0.050", "95.0", "±", "0.17"]
    assert "s/run" not in steady and "s/run" in plain
    # reference=False: the same row without the published column and its note.
    own = table.format_table(rows, tests=False, seconds=False, reference=False)
    assert own.splitlines()[4].split() == ["1", "100", "100", "1,000", "95.10", "±", "0.28", "0.050"]
    assert "Chlebus" not in own and "Chlebus 2018 %: the published table" in steady
    # At a fixed micro-batch the rows are different experiments: Welch's test, no reference.
    micro = [dict(r, micro_batch=10, effective_batch=10 * r["accum_steps"], welch_p=w)
             for r, w in zip(rows, (None, 0.5, 0.01))]
    text = table.format_table(micro)
    assert "fixed micro-batch 10" in text and "ANOVA" not in text and "95.0 ± 0.17" not in text
    assert "Welch's t-test against N=1 (each row its own spread); N=[20] differ at p < 0.05" in text
    assert "Welch" not in table.format_table(micro, tests=False)


@pytest.mark.slow
def test_table_cli_json_cache_and_no_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GRADLAB_CACHE", str(tmp_path))
    argv = ["--runs", "2", "--updates", "5", "--accum", "1,2", "--effective-batch", "8",
            "--eval-every", "5", "--json", "--no-progress"]
    assert table.cli(argv) == 0
    out = json.loads(capsys.readouterr().out)
    rows = out["rows"]
    assert [(r["accum_steps"], r["micro_batch"], r["updates"], r["runs"]) for r in rows] == \
        [(1, 8, 5, 2), (2, 4, 5, 2)]
    store = ResultCache(tmp_path)
    for r in rows:
        runs = [run_result.cached_result(store, run_config.RunConfig(accum_steps=r["accum_steps"], micro_batch=r["micro_batch"],
                                                     updates=5, eval_every=5, seed=s)) for s in (0, 1)]
        assert r["accuracies"] == [run.accuracy for run in runs]
        assert r["accuracy_mean"] == pytest.approx(np.mean(r["accuracies"]))
        assert r["accuracy_std"] == pytest.approx(np.std(r["accuracies"], ddof=1))
        assert r["seconds_per_run"] == pytest.approx(np.mean([run.seconds for run in runs]))
        assert (r["strategy"], r["lr"], r["sampling"]) == ("fused", 0.5, "independent")
    # Two rows of two runs: Student's t with 2 degrees of freedom, P(|T| > t) = 1 - t / sqrt(t^2 + 2)
    a, b = (np.asarray(r["accuracies"]) for r in rows)
    t = abs(b.mean() - a.mean()) / np.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2 * (1 / 2 + 1 / 2))
    assert rows[0]["p_value"] is None and rows[1]["p_value"] == pytest.approx(1 - t / np.sqrt(t * t + 2))
    assert rows[1]["welch_p"] == pytest.approx(welch_t(b, a)[2])
    assert set(out) == {"rows", "anova"}
    assert (out["anova"]["F"], out["anova"]["p_value"]) == pytest.approx((t * t, rows[1]["p_value"]))
    entries = sorted(tmp_path.rglob("*.json"))
    assert len(entries) == 4  # one per run

    # The cache is what the second call reads: doctor one entry and see it come back.
    config = run_config.RunConfig(accum_steps=2, micro_batch=4, updates=5, eval_every=5, seed=0)
    store = ResultCache(tmp_path)
    doctored = dict(store.get(run_result.run_key(config)), accuracy=0.5)
    store.put(run_result.run_key(config), doctored)
    table.cli(argv)
    cached = json.loads(capsys.readouterr().out)["rows"][1]
    assert cached["accuracies"][0] == 0.5

    table.cli(argv + ["--no-cache"])
    fresh = json.loads(capsys.readouterr().out)["rows"][1]
    assert fresh["accuracies"] == rows[1]["accuracies"]  # recomputed, and deterministic
    assert sorted(tmp_path.rglob("*.json")) == entries
    assert store.get(run_result.run_key(config))["accuracy"] == 0.5  # --no-cache wrote nothing


def strict_json(text):
    """`json.loads` that refuses NaN and Infinity, as JSON itself does."""
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"invalid JSON constant {c}"))


@pytest.mark.slow
def test_table_cli_json_is_strict_and_a_nan_loss_noise_reads_back(tmp_path, monkeypatch, capsys):
    # Two updates are too few to measure loss noise: NaN, stored and printed as null.
    monkeypatch.setenv("GRADLAB_CACHE", str(tmp_path))
    argv = ["--runs", "2", "--updates", "2", "--accum", "1,2", "--effective-batch", "4",
            "--eval-every", "2", "--json", "--no-progress"]
    assert table.cli(argv) == 0
    fresh = strict_json(capsys.readouterr().out)
    assert [r["loss_noise_var"] for r in fresh["rows"]] == [None, None]
    assert table.cli(argv) == 0  # now every run comes from the cache
    assert strict_json(capsys.readouterr().out)["rows"][1]["accuracies"] == \
        fresh["rows"][1]["accuracies"]
    config = run_config.RunConfig(accum_steps=2, micro_batch=2, updates=2, eval_every=2, seed=1)
    assert math.isnan(run_result.cached_result(ResultCache(tmp_path), config).loss_noise["var"])


@pytest.mark.parametrize("argv, message", [
    (["--accum", "1,3", "--effective-batch", "100"], "not divisible by accumulation count"),
    (["--accum", "1,1"], "each accumulation count once"),
    (["--accum", "1,x"], "comma-separated integers"),
    (["--runs", "0"], "expected a positive number, got '0'"),
    (["--sampling", "random"], "invalid choice: 'random'"),
    (["--micro-batch", "10", "--effective-batch", "100"], "not allowed with argument"),
])
def test_table_cli_rejects_bad_arguments(argv, message, capsys, monkeypatch):
    monkeypatch.setattr(table, "compare", lambda *a, **k: pytest.fail("ran despite bad arguments"))
    with pytest.raises(SystemExit) as exit_:
        table.cli(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


