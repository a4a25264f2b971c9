"""Each private Keras/TensorFlow hook in gradlab/_compat.py does what it claims, measured."""
import keras
import numpy as np
import tensorflow as tf

from gradlab import _compat, distribute
from tests.conftest import DEVICES


def test_on_two_replicas_a_loss_is_divided_once_by_default_and_not_at_all_inside_the_hook():
    dist = distribute.make_distribution(DEVICES)
    y, pred = tf.zeros((4, 1)), tf.ones((4, 1))
    mse = keras.losses.MeanSquaredError()

    def values():
        return dist.experimental_local_results(dist.run(lambda: mse(y, pred)))
    assert [float(v) for v in values()] == [0.5, 0.5]  # Keras: mean / num_replicas
    with _compat.losses_not_divided_by_replicas():
        assert [float(v) for v in values()] == [1.0, 1.0]
    assert [float(v) for v in values()] == [0.5, 0.5]  # and put back


def test_gradients_already_reduced_skips_keras_second_all_reduce():
    dist = distribute.make_distribution(DEVICES)
    with dist.scope():
        v = keras.Variable([0.0])
        opt = keras.optimizers.SGD(1.0)
        opt.build([v])

    def apply(hook):
        with hook:
            dist.run(lambda: opt.apply_gradients([(tf.constant([1.0]), v)]))
    counts = {}
    for name, hook in [("keras", _compat.contextlib.nullcontext()),
                       ("hooked", _compat.gradients_already_reduced(opt))]:
        graph = tf.function(lambda: apply(hook)).get_concrete_function().graph
        counts[name] = distribute.count_all_reduces(graph)
    assert counts == {"keras": 2, "hooked": 0}  # one collective per replica, or none
    with _compat.gradients_already_reduced(opt):  # nested: the inner exit keeps the outer's
        with _compat.gradients_already_reduced(opt):
            pass
        assert opt._all_reduce_sum_gradients is list
    assert "_all_reduce_sum_gradients" not in opt.__dict__


def test_masks_counters_layers_and_fresh_collective_keys():
    out = keras.layers.Embedding(5, 2, mask_zero=True)(tf.constant([[3, 0, 0]]))
    np.testing.assert_array_equal(_compat.keras_mask(out).numpy(), [[True, False, False]])
    assert _compat.keras_mask(tf.zeros(3)) is None
    lso = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD())
    assert len(_compat.counters(lso)) == 2 and _compat.optimizer_chain(lso)[-1] is lso.inner_optimizer
    model = keras.Sequential([keras.Input((2,)), keras.Sequential([keras.layers.Dense(1)])])
    assert [type(l).__name__ for l in _compat.sublayers(model) if type(l).__name__ != "InputLayer"] == ["Sequential", "Dense"]
    # Two strategies whose all-reduces have different shapes: both run (shared keys would abort).
    for shape in [(3,), (5, 2)]:
        dist = distribute.make_distribution(DEVICES)
        summed = dist.run(lambda: tf.distribute.get_replica_context().all_reduce("sum", tf.ones(shape)))
        np.testing.assert_array_equal(dist.experimental_local_results(summed)[0].numpy(), np.full(shape, 2.0))


def test_output_loss_weight_reweighs_each_output_tracker_only_while_active():
    inputs = keras.Input((1,))
    model = keras.Model(inputs, [keras.layers.Dense(1)(inputs), keras.layers.Dense(1)(inputs)])
    model.compile(loss=["mse", "mse"])
    batch = dict(x=tf.zeros((4, 1)), y=[tf.ones((4, 1))] * 2, y_pred=[tf.zeros((4, 1))] * 2)
    quarter = tf.constant(0.25)
    with _compat.output_loss_weight(model, quarter, batch["y"], batch["y_pred"]):  # builds them
        model.compute_loss(**batch)
    trackers = [m for m in model._compile_loss.metrics if m is not None]
    assert [float(m.count) for m in trackers] == [0.25, 0.25]
    model.compute_loss(**batch)  # Keras's own weight again: the batch's 4 rows
    assert [float(m.count) for m in trackers] == [4.25, 4.25]
    assert all("update_state" not in m.__dict__ for m in trackers)
