"""run_memory: a run's settings measured in a fresh process, cached by the settings that
decide memory (not the seed, lr or length), failures not cached."""
import pytest

from gradlab.lab import run_memory
from gradlab.studies.cache import ResultCache
from gradlab.studies.runs.run_config import RunConfig
from gradlab.studies.models import make_model


def test_one_measurement_serves_every_seed_lr_and_length(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(run_memory, "_in_child", lambda config, updates: calls.append(config) or
                        {"peak_mb": 5.0, "compile_peak_mb": 6.0, "device": "CPU:0"})
    cache = ResultCache(tmp_path)
    first = RunConfig(accum_steps=4, micro_batch=25, updates=100, seed=0, lr=0.5)
    assert run_memory.allocator_peak(first, cache)["peak_mb"] == 5.0
    same = RunConfig(accum_steps=4, micro_batch=25, updates=20, seed=3, lr=0.1)
    assert run_memory.allocator_peak(same, cache)["peak_mb"] == 5.0
    assert len(calls) == 1
    run_memory.allocator_peak(RunConfig(accum_steps=2, micro_batch=25), cache)  # other settings
    assert len(calls) == 2


def test_a_failure_is_reported_and_not_cached(tmp_path, monkeypatch):
    monkeypatch.setattr(run_memory, "_in_child", lambda config, updates: {"error": "exit 1: boom"})
    cache = ResultCache(tmp_path)
    assert run_memory.allocator_peak(RunConfig(), cache) == {"error": "exit 1: boom"}
    assert list(tmp_path.rglob("*.json")) == []


def test_repeated_peaks_measure_each_process_and_cache_them_as_one(tmp_path, monkeypatch):
    peaks = iter([1.75, 2.75, 1.75])
    calls = []
    monkeypatch.setattr(run_memory, "_in_child", lambda config, updates: calls.append(updates) or
                        {"peak_mb": next(peaks), "compile_peak_mb": 0.0, "device": "CPU:0"})
    cache = ResultCache(tmp_path)
    config = RunConfig(accum_steps=4, micro_batch=25)
    assert run_memory.repeated_peaks(config, 3, cache) == {"peaks_mb": [1.75, 2.75, 1.75]}
    assert run_memory.repeated_peaks(RunConfig(accum_steps=4, micro_batch=25, seed=2), 3,
                                     cache) == {"peaks_mb": [1.75, 2.75, 1.75]}
    assert calls == [3, 3, 3]
    # Not the single measurement's entry: allocator_peak measures on its own.
    monkeypatch.setattr(run_memory, "_in_child", lambda config, updates: {"error": "exit 1: boom"})
    assert run_memory.allocator_peak(config, cache) == {"error": "exit 1: boom"}
    assert run_memory.repeated_peaks(RunConfig(accum_steps=2, micro_batch=25), 2,
                                     cache) == {"error": "exit 1: boom"}


def test_bad_config_is_named():
    with pytest.raises(TypeError, match="'fused'"):
        run_memory.allocator_peak("fused")
    with pytest.raises(TypeError, match="'fused'"):
        run_memory.repeated_peaks("fused")


@pytest.mark.slow
def test_a_real_fresh_process_measures_the_run(tmp_path):
    config = RunConfig(strategy="fused", accum_steps=2, micro_batch=8, updates=10)
    r = run_memory.allocator_peak(config, ResultCache(tmp_path), updates=1)
    assert "error" not in r, r.get("error")
    assert r["device"] == "CPU:0"
    # It held at least the weights and a gradient of each (float32).
    assert r["peak_mb"] >= 2 * make_model("mlp").count_params() * 4 / 2**20


def test_model_sizes_count_weights_and_one_examples_layer_outputs():
    mlp = run_memory.model_sizes("mlp")
    # 784-256-10: (784 + 1) * 256 + (256 + 1) * 10 weights; outputs per example: the input
    # 784, Dense 256, relu 256, logits 10 (Flatten is a view), float32.
    assert mlp["weights_mb"] == pytest.approx(203_530 * 4 / 2**20)
    assert mlp["activations_mb"] == pytest.approx((784 + 256 + 256 + 10) * 4 / 2**20)
    conv = run_memory.model_sizes("conv")
    assert conv["activations_mb"] == pytest.approx((784 + 3 * 28 * 28 * 32 + 7 * 7 * 32 + 10) * 4 / 2**20)
    # The rule: at B = 100, b = 25 the MLP's activations saved are less than one gradient sum.
    assert mlp["activations_mb"] * (100 - 25) < mlp["weights_mb"]
    assert conv["activations_mb"] * (100 - 25) > conv["weights_mb"]
