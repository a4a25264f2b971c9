"""`Options`: one set of checked keywords, one XLA decision and one guard decision for both faces."""
import keras
import pytest

import gradlab as gl
from gradlab.core.homes import KerasOptimizer, Loop
from gradlab.training.options import Options, guarded
from gradlab.training.xla import xla_by_default

from common import ACCELERATOR


def _mlp():
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])


@pytest.mark.parametrize("kwargs, error, word", [
    (dict(accum_steps=0), ValueError, "0"),
    (dict(accum_steps=2, clip_norm=-1.0), ValueError, "-1.0"),
    (dict(accum_steps=2, batchnorm="global"), ValueError, "'global'"),
    (dict(accum_steps=2, jit_compile="yes"), ValueError, "'yes'"),
    (dict(accum_steps=2, overlap=0), ValueError, "0"),
    (dict(accum_steps=2, check="sometimes"), ValueError, "'sometimes'"),
])
def test_both_faces_refuse_the_same_bad_option_in_the_same_words(kwargs, error, word):
    with pytest.raises(error, match=word) as direct:
        Options.checked(**kwargs)
    with pytest.raises(error) as fit:
        gl.AccumulatingModel(_mlp(), **kwargs)
    with pytest.raises(error) as step:
        gl.make_strategy("fused", _mlp(), "mse", "sgd", **kwargs)
    assert str(direct.value) == str(fit.value) == str(step.value)


def test_one_xla_decision():
    dense = _mlp()
    conv = keras.Sequential([keras.Input((8, 8, 1)), keras.layers.Conv2D(2, 3)])
    auto = Options.checked(2)
    assert auto.xla(dense) and auto.xla(conv) == ACCELERATOR      # a convolution: XLA on a GPU only
    assert not auto.xla(dense, auto=False) and not auto.xla(dense, allowed=False)
    forced = Options.checked(2, jit_compile=True)
    assert forced.xla(conv) and forced.xla(dense, auto=False) and not forced.xla(dense, allowed=False)
    assert not Options.checked(2, jit_compile=False).xla(dense)
    # both faces decide with it: fit's "auto" on one device, step's for fused only
    assert gl.AccumulatingModel(_mlp(), 2)._resolve_jit()
    assert gl.make_strategy("fused", _mlp(), "mse", "sgd", accum_steps=2).jit()
    assert not gl.make_strategy("accumulate", _mlp(), "mse", "sgd", accum_steps=2).jit()


def test_auto_leaves_convolutions_out_only_without_an_accelerator():
    conv = keras.Sequential([keras.Input((8, 8, 1)), keras.layers.Conv2D(2, 3)])
    nested = keras.Sequential([keras.Input((8, 8, 1)), keras.Sequential([keras.layers.DepthwiseConv2D(3)])])
    dropout = keras.Sequential([keras.Input((3,)), keras.layers.Dropout(0.5), keras.layers.Dense(2)])
    assert [xla_by_default(m, accelerator=False) for m in (_mlp(), conv, nested, dropout)] == [True, False, False, False]
    assert [xla_by_default(m, accelerator=True) for m in (_mlp(), conv, nested, dropout)] == [True, True, True, False]
    assert xla_by_default(conv) == ACCELERATOR  # None: asks TensorFlow, as Keras's "auto" does


def test_one_guard_decision():
    sgd = keras.optimizers.SGD()
    scaled = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD())
    assert guarded(sgd, Loop) and guarded(sgd, Loop())
    assert not guarded(scaled, Loop)          # it skips and lowers its scale itself
    assert not guarded(sgd, KerasOptimizer)   # Keras applies whatever it accumulated
    assert gl.make_strategy("fused", _mlp(), "mse", sgd, accum_steps=2).guard
    assert not gl.make_strategy("keras", _mlp(), "mse", "sgd", accum_steps=2).guard
