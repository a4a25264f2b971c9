"""`step_timing`: the strategies the bench times, and that timing them changes nothing they
compute (no timing is asserted: speed is a benchmark)."""
import keras
import numpy as np
import pytest
import tensorflow as tf

import gradlab as gl
from gradlab.studies.bench import step_timing
from gradlab.studies.data import load_mnist
from gradlab.studies.models import make_model


class Counter:
    """A progress bar that only counts."""

    def __init__(self):
        self.n, self.description = 0, None

    def update(self, n=1):
        self.n += n

    def set_description(self, text):
        self.description = text


def test_towers_join_the_default_strategies_when_there_are_devices():
    # tests/common.py made two logical CPUs
    assert step_timing.default_strategies() == ["large_batch", "fused", "accumulate", "keras",
                                                "host_average", "towers", "mirrored"]


def test_base_name_strips_only_the_xla_suffix():
    assert [step_timing.base_name(n) for n in ("fused+xla", "large_batch", "keras")] == [
        "fused", "large_batch", "keras"]


def test_every_strategy_is_timed_every_round_and_the_bar_counts_every_update():
    c = step_timing.make_config("mlp", accum_steps=2, micro_batch=3, rounds=3, updates=2, warmup=1,
                                strategies=["large_batch", "accumulate"], memory=False)
    assert c["batch"] == 6 and c["strategies"] == ["large_batch", "accumulate"]
    bar = Counter()
    rows, load = step_timing.time_strategies(c, bar)
    assert bar.n == 2 * (1 + 3 * 2) and bar.description == "mlp N=2 b=3"
    assert len(load) == 2
    for name, r in rows.items():
        assert len(r["ms"]) == 3 and all(ms > 0 for ms in r["ms"])
        assert r["ms_min"] <= r["ms_q25"] <= r["ms_median"] <= r["ms_q75"] <= r["ms_max"]
        assert r["ms_median"] == np.median(r["ms"])


@pytest.mark.slow  # two compilations, XLA among them: ~10 s on 2 cores
def test_fused_never_retraces_for_batches_of_the_same_shape():
    d = load_mnist()
    for jit in (False, True):
        s = gl.make_strategy("fused", make_model("mlp", seed=0), "sparse_categorical_crossentropy",
                             keras.optimizers.SGD(0.1), accum_steps=4, jit_compile=jit)
        s.step(d.x_train[:30], d.y_train[:30])  # 30 = 8 + 8 + 7 + 7: two runs of equal sizes
        assert s.trace_count() == 1
        for k in range(1, 4):  # new examples, as numpy arrays and as tensors
            x, y = d.x_train[30 * k:30 * k + 30], d.y_train[30 * k:30 * k + 30]
            s.step(x, y) if k % 2 else s.step(tf.constant(x), tf.constant(y))
        assert s.trace_count() == 1, jit


@pytest.mark.slow  # an XLA compilation: ~10 s on 2 cores
def test_fused_with_xla_equals_large_batch():
    # The bench's fused+xla rows are the same work: XLA changes the speed, not the update.
    d = load_mnist()
    x, y = d.x_train[:30], d.y_train[:30]
    runs = []
    for name, options in (("large_batch", {}), ("fused", {"jit_compile": True})):
        s = gl.make_strategy(name, make_model("mlp", seed=1),
                             keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                             keras.optimizers.SGD(0.1, momentum=0.9), accum_steps=4, **options)
        runs.append(([s.step(x, y) for _ in range(3)], s.model.weights))
    (la, wa), (lb, wb) = runs
    np.testing.assert_allclose(la, lb, rtol=1e-5, atol=1e-6)
    for va, vb in zip(wa, wb):
        np.testing.assert_allclose(va.numpy(), vb.numpy(), rtol=1e-5, atol=1e-6, err_msg=va.path)
