"""`mirrored`: per-replica accumulation under tf.distribute equals one large batch, with one
all-reduce per update, on the session's two logical CPUs (tests/common.py)."""
import keras
import numpy as np
import pytest
import tensorflow as tf

import gradlab
from gradlab.core import distribute
from gradlab.studies.data import load_mnist
from gradlab.studies.models import make_model
from gradlab.training.strategies import make_strategy

DEVICES = gradlab.tower_devices(2)
UPDATES = 3
KERAS_LOSS = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def per_example_loss(y, pred):
    """A plain function returning one loss per example: Keras does not scale it."""
    return keras.losses.sparse_categorical_crossentropy(y, pred, from_logits=True)


OPTIMIZERS = {
    "sgd_momentum": lambda: keras.optimizers.SGD(0.1, momentum=0.9),
    "adam": lambda: keras.optimizers.Adam(1e-2),
}


def batches(batch, updates=UPDATES):
    data = load_mnist()
    return [(data.x_train[u * batch:(u + 1) * batch], data.y_train[u * batch:(u + 1) * batch])
            for u in range(updates)]


def train(name, model, optimizer, accum_steps, batch, loss_fn=KERAS_LOSS, **options):
    devices = DEVICES if name == "mirrored" else None
    s = make_strategy(name, lambda: make_model(model, seed=0), loss_fn, OPTIMIZERS[optimizer],
                      accum_steps=accum_steps, devices=devices, **options)
    initial = s.model.get_weights()
    losses = [s.step(x, y) for x, y in batches(batch)]
    return s, initial, losses


def assert_same_training(a, b, atol=1e-5):
    (sa, init_a, losses_a), (sb, init_b, losses_b) = a, b
    for wa, wb in zip(init_a, init_b):
        np.testing.assert_array_equal(wa, wb)  # identical initial weights
    np.testing.assert_allclose(losses_a, losses_b, rtol=1e-5)
    for wa, wb in zip(sa.model.get_weights(), sb.model.get_weights()):
        np.testing.assert_allclose(wa, wb, rtol=1e-5, atol=atol)


# Every model meets every optimizer and every accum_steps (6 cases, not all 12, for speed).
# batch 31 on 2 replicas x 3 micro-batches: shards 16 + 15, micro-batches 6,5,5 and 5,5,5;
# the embedding's IndexedSlices then differ in length between replicas.
# Both models in one session also checks that strategies whose all-reduces have different
# shapes coexist (TensorFlow's shared collective keys would abort the second one).
@pytest.mark.parametrize("model, optimizer, accum_steps, batch", [
    ("mlp", "sgd_momentum", 1, 32), ("mlp", "adam", 2, 32), ("mlp", "sgd_momentum", 3, 31),
    ("embedding", "adam", 1, 32), ("embedding", "sgd_momentum", 2, 32),
    ("embedding", "adam", 3, 31),
])
def test_mirrored_equals_large_batch(model, optimizer, accum_steps, batch):
    mirrored = train("mirrored", model, optimizer, accum_steps, batch)
    large = train("large_batch", model, optimizer, accum_steps, batch)
    assert_same_training(mirrored, large)
    s = mirrored[0]
    assert s.distribution.num_replicas_in_sync == 2
    # Two functions (the sums, then the update, made only if they are finite), traced once
    # for all updates: a further step traces nothing.
    traced = s.trace_count()
    s.step(*batches(batch, updates=1)[0])
    assert s.trace_count() == traced <= 3
    assert s.all_reduces_per_update() == 1


def test_one_all_reduce_per_update_whatever_accum_steps():
    counts = {}
    for accum_steps in (1, 8):
        s = make_strategy("mirrored", lambda: make_model("mlp", seed=0), KERAS_LOSS,
                          OPTIMIZERS["adam"], accum_steps=accum_steps, devices=DEVICES)
        with pytest.raises(RuntimeError, match="nothing is traced yet"):
            s.all_reduces_per_update()
        s.step(*batches(32, updates=1)[0])
        counts[accum_steps] = s.all_reduces_per_update()
    # Not accum_steps all-reduces: the micro-batch loop holds no communication.
    assert counts == {1: 1, 8: 1}


def test_keras_apply_gradients_in_a_replica_all_reduces_again():
    # Why gradlab passes its summed gradients through: Keras 3 sums them across replicas
    # once more inside apply_gradients, an extra collective and an R-fold update.
    dist = distribute.make_distribution(DEVICES)
    with dist.scope():
        v = keras.Variable(np.zeros(3, np.float32))
        opt = keras.optimizers.SGD(1.0)
        opt.build([v])

    @tf.function
    def update():
        dist.run(lambda: opt.apply_gradients([(tf.ones(3), v)]))

    update()
    np.testing.assert_array_equal(v.numpy(), [-2.0, -2.0, -2.0])  # 1 + 1 from two replicas
    assert distribute.count_all_reduces(update.get_concrete_function().graph) == 2


def mixed_loss(y, pred):
    # A loss object (which Keras divides by R in a replica) plus the user's own penalty
    # (which it does not): no single factor applied afterwards could undo that.
    return KERAS_LOSS(y, pred) + 0.1 * tf.reduce_mean(tf.square(pred))


def test_keras_divides_loss_objects_by_replicas():
    y = np.array([1, 2, 3])
    pred = np.random.default_rng(0).normal(size=(3, 10)).astype(np.float32)
    plain = float(KERAS_LOSS(y, pred))
    dist = distribute.make_distribution(DEVICES)
    with dist.scope():
        assert float(KERAS_LOSS(y, pred)) == pytest.approx(plain / 2)
    assert distribute.replica_loss_factor(dist, KERAS_LOSS, y, pred) == pytest.approx(2.0)
    assert 1.0 < distribute.replica_loss_factor(dist, mixed_loss, y, pred) < 2.0
    assert distribute.replica_loss_factor(dist, per_example_loss, y, pred) == 1.0


@pytest.mark.parametrize("loss_fn", [KERAS_LOSS, per_example_loss, mixed_loss],
                         ids=["keras_object", "per_example_fn", "keras_object_plus_penalty"])
def test_both_kinds_of_loss_equal_large_batch(loss_fn):
    mirrored = train("mirrored", "mlp", "sgd_momentum", 2, 31, loss_fn=loss_fn)
    large = train("large_batch", "mlp", "sgd_momentum", 2, 31, loss_fn=loss_fn)
    assert_same_training(mirrored, large)


def test_clip_norm_clips_the_reduced_update_once():
    mirrored = train("mirrored", "mlp", "sgd_momentum", 2, 30, clip_norm=0.05)
    large = train("large_batch", "mlp", "sgd_momentum", 2, 30, clip_norm=0.05)
    unclipped = train("large_batch", "mlp", "sgd_momentum", 2, 30)
    assert_same_training(mirrored, large)
    assert not np.allclose(large[0].model.get_weights()[0], unclipped[0].model.get_weights()[0])


def test_too_small_batch_raises_before_tf_work_and_changes_nothing():
    s = make_strategy("mirrored", lambda: make_model("mlp", seed=0), KERAS_LOSS,
                      OPTIMIZERS["adam"], accum_steps=3, devices=DEVICES)
    (x, y), = batches(5, updates=1)
    before = s.model.get_weights()
    with pytest.raises(ValueError, match="batch of 1 examples is too small for 2 replicas"):
        s.step(x[:1], y[:1])
    assert s.trace_count() == 0 and int(s.optimizer.iterations.numpy()) == 0
    for w0, w1 in zip(before, s.model.get_weights()):
        np.testing.assert_array_equal(w0, w1)
    (x, y), = batches(12, updates=1)
    s.step(x, y)
    after = s.model.get_weights()
    with pytest.raises(ValueError, match="too small"):
        s.step(x[:1], y[:1])
    for w0, w1 in zip(after, s.model.get_weights()):
        np.testing.assert_array_equal(w0, w1)
    assert int(s.optimizer.iterations.numpy()) == 1


def _op_types(graph):
    graph_def = graph.as_graph_def()
    return {n.op for n in graph_def.node} | {n.op for f in graph_def.library.function for n in f.node_def}


@pytest.mark.gpu("AccumulatingModel.fit under MirroredStrategy on two physical GPUs, all-reducing "
                 "with NCCL (tf.distribute.NcclAllReduce) and with TensorFlow's default, equal to "
                 "Keras's plain fit on one device")
@pytest.mark.parametrize("nccl", [True, False], ids=["NcclAllReduce", "default"])
def test_mirrored_fit_on_physical_gpus_with_nccl_equals_keras_fit(nccl):
    gpus = tf.config.list_physical_devices("GPU")
    if len(gpus) < 2:
        pytest.skip(f"NCCL needs two physical GPUs, found {len(gpus)} (logical GPUs split from "
                    "one all-reduce without it)")
    # TensorFlow's default on physical GPUs: collectives, NCCL underneath (fresh keys: gradlab's)
    dist = (tf.distribute.MirroredStrategy(DEVICES, cross_device_ops=tf.distribute.NcclAllReduce())
            if nccl else distribute.make_distribution(DEVICES))
    if nccl:
        reduce = tf.function(lambda: dist.run(
            lambda: tf.distribute.get_replica_context().all_reduce("sum", tf.ones(3))))
        assert "NcclAllReduce" in _op_types(reduce.get_concrete_function().graph)
    data = load_mnist()
    x, y = data.x_train[:240], data.y_train[:240].astype("int64")
    mlp = lambda: make_model("mlp", seed=0)
    plain = mlp()
    plain.compile(optimizer=keras.optimizers.SGD(0.1), loss=KERAS_LOSS, metrics=["accuracy"])
    expected = plain.fit(x, y, batch_size=60, epochs=2, shuffle=False, verbose=0).history
    with dist.scope():
        acc = gradlab.AccumulatingModel(mlp(), accum_steps=3)  # 30 rows a GPU, 10 a micro-batch
        acc.compile(optimizer=keras.optimizers.SGD(0.1), loss=KERAS_LOSS, metrics=["accuracy"])
        got = acc.fit(x, y, batch_size=60, epochs=2, shuffle=False, verbose=0).history
    for key in ("loss", "accuracy"):
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-5, err_msg=key)
    for a, b in zip(acc.get_weights(), plain.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
