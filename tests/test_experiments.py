"""Experiments: configs, deterministic runs, paired accumulation = the large batch, the cache
around runs, statistics, and the JSON of `python -m gradlab table` and `noise`."""
import dataclasses
import json
import math

import numpy as np
import pytest

from gradlab import experiments as ex
from gradlab.cache import ResultCache, cache_key

TINY = dict(updates=6, eval_every=3, sampling="paired")


# -- configs ---------------------------------------------------------------------------------

@pytest.mark.parametrize("field, value, error, message", [
    ("strategy", "magic", ValueError, "strategy must be one of .*got 'magic'"),
    ("accum_steps", 0, ValueError, "accum_steps must be an integer >= 1, got 0"),
    ("accum_steps", 2.0, TypeError, r"accum_steps must be a positive integer, got 2.0 \(float\)"),
    ("micro_batch", True, TypeError, "micro_batch must be a positive integer, got True"),
    ("updates", -5, ValueError, "updates must be an integer >= 1, got -5"),
    ("optimizer", "lbfgs", ValueError, "optimizer must be one of sgd, momentum, adam; got 'lbfgs'"),
    ("lr", 0.0, ValueError, "lr must be a positive finite number, got 0.0"),
    ("lr", float("inf"), ValueError, "lr must be a positive finite number, got inf"),
    ("lr", "0.1", TypeError, r"lr must be a positive number, got '0.1' \(str\)"),
    ("model", "resnet", ValueError, "unknown model|model must be one of .*got 'resnet'"),
    ("seed", -1, ValueError, "seed must be an integer >= 0, got -1"),
    ("sampling", "shuffled", ValueError, "sampling must be one of paired, independent; got 'shuffled'"),
    ("eval_every", 0, ValueError, "eval_every must be an integer >= 1, got 0"),
])
def test_config_validation_names_the_field_and_value(field, value, error, message):
    with pytest.raises(error, match=message):
        ex.RunConfig(**{field: value})


def test_config_is_frozen_normalised_and_bounded_by_the_data():
    c = ex.RunConfig(accum_steps=np.int64(5), micro_batch=20, lr=1)
    assert (c.accum_steps, c.effective_batch, c.lr) == (5, 100, 1.0)
    assert type(c.accum_steps) is int and type(c.lr) is float
    assert cache_key(c.to_dict()) == cache_key(ex.RunConfig(accum_steps=5, micro_batch=20, lr=1.0).to_dict())
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.lr = 0.1
    with pytest.raises(ValueError, match="accum_steps\\*micro_batch = 5\\*1000 = 5000 exceeds the 4,000"):
        ex.RunConfig(accum_steps=5, micro_batch=1000)


def test_sample_order_paired_is_shared_independent_is_fresh():
    paired = [ex.sample_order(ex.RunConfig(accum_steps=n, micro_batch=60 // n, updates=100,
                                           sampling="paired")) for n in (1, 3)]
    np.testing.assert_array_equal(paired[0], paired[1])
    assert paired[0].shape == (100, 60)
    np.testing.assert_array_equal(np.sort(paired[0].ravel()[:4000]), np.arange(4000))  # an epoch
    bigger = ex.sample_order(ex.RunConfig(micro_batch=120, updates=10, sampling="paired"))
    np.testing.assert_array_equal(bigger.ravel(), paired[0].ravel()[:1200])  # same stream
    fresh = [ex.sample_order(ex.RunConfig(accum_steps=n, micro_batch=60 // n, updates=100,
                                          sampling="independent")) for n in (1, 3)]
    assert not np.array_equal(fresh[0], fresh[1])
    assert ex._model_seed(ex.RunConfig(accum_steps=3, micro_batch=20)) != ex._model_seed(
        ex.RunConfig(accum_steps=1, micro_batch=60))


# -- runs ------------------------------------------------------------------------------------

def test_a_run_is_deterministic_and_records_everything():
    config = ex.RunConfig(accum_steps=2, micro_batch=10, **TINY)
    a, _ = ex.train(config)
    b, _ = ex.train(config)
    np.testing.assert_array_equal(a.losses, b.losses)
    np.testing.assert_array_equal(a.eval_accuracy, b.eval_accuracy)
    assert a.losses.shape == (6,) and np.all(np.isfinite(a.losses))
    assert a.eval_updates.tolist() == [0, 3, 6]
    assert a.accuracy == a.eval_accuracy[-1] and 0.0 <= a.accuracy <= 1.0
    assert a.seconds_per_update > 0 and a.seconds > a.seconds_per_update
    assert set(a.loss_noise) == {"var", "std", "relative", "window", "count"}


def test_paired_accumulation_is_the_large_batch():
    results = [ex.train(ex.RunConfig(accum_steps=n, micro_batch=40 // n, updates=40,
                                     eval_every=20, sampling="paired"))[0] for n in (1, 4, 8)]
    for r in results[1:]:
        np.testing.assert_allclose(r.losses, results[0].losses, atol=1e-4)
        np.testing.assert_array_equal(r.eval_accuracy, results[0].eval_accuracy)
    assert results[0].losses[-1] < results[0].losses[0] - 0.5  # and it did learn


def test_run_is_cached_and_a_corrupt_entry_is_reported_and_recomputed(tmp_path):
    store = ResultCache(tmp_path)
    config = ex.RunConfig(accum_steps=2, micro_batch=5, **TINY)
    fresh = ex.run(config, cache=store, progress=False)
    assert not fresh.cached
    hit = ex.run(config, cache=store, progress=False)
    assert hit.cached and hit.config == config
    np.testing.assert_array_equal(hit.losses, fresh.losses)
    assert (hit.accuracy, hit.seconds) == (fresh.accuracy, fresh.seconds)  # stored, not rerun

    path = store.path(ex._key(config))
    path.write_text(path.read_text()[:50])  # as if cut off mid-write by something else
    with pytest.warns(RuntimeWarning, match=path.name):
        again = ex.run(config, cache=store, progress=False)
    assert not again.cached
    np.testing.assert_array_equal(again.losses, fresh.losses)
    assert ex.run(config, cache=store, progress=False).cached  # the entry was rewritten


# -- statistics --------------------------------------------------------------------------------

def test_table_configs_check_divisibility_before_running():
    with pytest.raises(ValueError, match=r"effective batch 100 is not divisible by accumulation count\(s\) \[3, 7\]"):
        ex.table_configs([1, 3, 5, 7], effective_batch=100)
    with pytest.raises(ValueError, match=r"each accumulation count once, got \[1, 1\]"):
        ex.table_configs([1, 1], micro_batch=8)
    rows = ex.table_configs([1, 4], micro_batch=8, runs=2, updates=5, seed=10)
    assert [[(c.accum_steps, c.micro_batch, c.seed) for c in row] for row in rows] == \
        [[(1, 8, 10), (1, 8, 11)], [(4, 8, 10), (4, 8, 11)]]


def test_format_table_shows_the_reference_beside_matching_rows():
    runs = {1: [0.949, 0.953], 5: [0.948, 0.951], 20: [0.939, 0.941]}
    p_values = ex.pooled_t(list(runs.values()))
    rows = [{"accum_steps": n, "micro_batch": 100 // n, "effective_batch": 100, "updates": 1000,
             "iterations": 1000 * n, "runs": 2, "accuracies": accs,
             "accuracy_mean": ex.mean_std(accs)[0], "accuracy_std": ex.mean_std(accs)[1],
             "seconds_per_run": 3.0, "loss_noise_var": 0.0025,
             "p_value": None if p is None else p[2], "model": "mlp",
             "optimizer": "sgd", "lr": 0.5, "sampling": "independent", "strategy": "fused"}
            for (n, accs), p in zip(runs.items(), p_values)]
    text = ex.format_table(rows)
    lines = text.splitlines()
    assert "mlp, sgd lr=0.5, fused strategy, independent sampling" in lines[0]
    assert "fixed effective batch 100" in lines[0]
    assert lines[4].split() == ["1", "100", "100", "1,000", "95.10", "±", "0.28", "-", "0.050",
                                "3.0", "95.0", "±", "0.17"]
    assert "95.2 ± 0.30" in lines[6]
    f, _, _, p = ex.anova(list(runs.values()))
    assert f"F = {f:.2f}, p = {p:.3f}: the rows differ beyond run-to-run noise" in text
    assert "largest |difference| from N=1: 1.10 points" in text
    # At a fixed micro-batch the rows are different experiments: Welch's test, no reference.
    micro = [dict(r, micro_batch=10, effective_batch=10 * r["accum_steps"], welch_p=w)
             for r, w in zip(rows, (None, 0.5, 0.01))]
    text = ex.format_table(micro)
    assert "fixed micro-batch 10" in text and "ANOVA" not in text and "95.0 ± 0.17" not in text
    assert "Welch's t-test against N=1 (each row its own spread); N=[20] differ at p < 0.05" in text


def test_table_cli_json_cache_and_no_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GRADLAB_CACHE", str(tmp_path))
    argv = ["--runs", "2", "--updates", "5", "--accum", "1,2", "--effective-batch", "8",
            "--eval-every", "5", "--json", "--no-progress"]
    assert ex.table_cli(argv) == 0
    out = json.loads(capsys.readouterr().out)
    rows = out["rows"]
    assert [(r["accum_steps"], r["micro_batch"], r["updates"], r["runs"]) for r in rows] == \
        [(1, 8, 5, 2), (2, 4, 5, 2)]
    for r in rows:
        assert {"accuracy_mean", "accuracy_std", "seconds_per_run"} <= set(r)
        assert 0.0 < r["accuracy_mean"] < 1.0 and r["accuracy_std"] >= 0.0
        assert r["accuracy_mean"] == pytest.approx(np.mean(r["accuracies"]))
        assert (r["strategy"], r["lr"], r["sampling"]) == ("fused", 0.5, "independent")
    assert rows[0]["p_value"] is None and 0.0 <= rows[1]["p_value"] <= 1.0
    assert 0.0 <= rows[1]["welch_p"] <= 1.0
    assert set(out) == {"rows", "anova"} and 0.0 <= out["anova"]["p_value"] <= 1.0
    entries = sorted(tmp_path.rglob("*.json"))
    assert len(entries) == 4  # one per run

    # The cache is what the second call reads: doctor one entry and see it come back.
    config = ex.RunConfig(accum_steps=2, micro_batch=4, updates=5, eval_every=5, seed=0)
    store = ResultCache(tmp_path)
    doctored = dict(store.get(ex._key(config)), accuracy=0.5)
    store.put(ex._key(config), doctored)
    ex.table_cli(argv)
    cached = json.loads(capsys.readouterr().out)["rows"][1]
    assert cached["accuracies"][0] == 0.5

    ex.table_cli(argv + ["--no-cache"])
    fresh = json.loads(capsys.readouterr().out)["rows"][1]
    assert fresh["accuracies"] == rows[1]["accuracies"]  # recomputed, and deterministic
    assert sorted(tmp_path.rglob("*.json")) == entries
    assert store.get(ex._key(config))["accuracy"] == 0.5  # --no-cache wrote nothing


def strict_json(text):
    """`json.loads` that refuses NaN and Infinity, as JSON itself does."""
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"invalid JSON constant {c}"))


def test_table_cli_json_is_strict_and_a_nan_loss_noise_reads_back(tmp_path, monkeypatch, capsys):
    # Two updates are too few to measure loss noise: NaN, stored and printed as null.
    monkeypatch.setenv("GRADLAB_CACHE", str(tmp_path))
    argv = ["--runs", "2", "--updates", "2", "--accum", "1,2", "--effective-batch", "4",
            "--eval-every", "2", "--json", "--no-progress"]
    assert ex.table_cli(argv) == 0
    fresh = strict_json(capsys.readouterr().out)
    assert [r["loss_noise_var"] for r in fresh["rows"]] == [None, None]
    assert ex.table_cli(argv) == 0  # now every run comes from the cache
    assert strict_json(capsys.readouterr().out)["rows"][1]["accuracies"] == \
        fresh["rows"][1]["accuracies"]
    config = ex.RunConfig(accum_steps=2, micro_batch=2, updates=2, eval_every=2, seed=1)
    assert math.isnan(ex.cached_result(ResultCache(tmp_path), config).loss_noise["var"])


@pytest.mark.parametrize("argv, message", [
    (["--accum", "1,3", "--effective-batch", "100"], "not divisible by accumulation count"),
    (["--accum", "1,1"], "each accumulation count once"),
    (["--accum", "1,x"], "comma-separated integers"),
    (["--runs", "0"], "expected a positive number, got '0'"),
    (["--sampling", "random"], "invalid choice: 'random'"),
    (["--micro-batch", "10", "--effective-batch", "100"], "not allowed with argument"),
])
def test_table_cli_rejects_bad_arguments(argv, message, capsys, monkeypatch):
    monkeypatch.setattr(ex, "compare", lambda *a, **k: pytest.fail("ran despite bad arguments"))
    with pytest.raises(SystemExit) as exit_:
        ex.table_cli(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_noise_cli_json(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GRADLAB_CACHE", str(tmp_path))
    argv = ["--accum", "1,2", "--micro-batch", "3", "--effective-batch", "4", "--draws", "4",
            "--warmup", "2", "--loss-updates", "8", "--examples", "40", "--json", "--no-progress"]
    assert ex.noise_cli(argv) == 0
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
    ex.noise_cli(argv)  # the second time from the cache: the same object
    assert json.loads(capsys.readouterr().out) == report
    with pytest.raises(SystemExit):
        ex.noise_cli(["--accum", "3", "--effective-batch", "4"])
    assert "at least 2 different counts" in capsys.readouterr().err
