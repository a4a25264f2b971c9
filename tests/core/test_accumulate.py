import numpy as np
import keras
import tensorflow as tf

from gradlab.core.accumulate import Accumulators, Sums, fused_grads, loop_sum
from gradlab.core.microbatch import split_sizes
from gradlab.core.loss_terms import loss_and_grads, loss_terms


def _linear():
    # pred = x @ w with w = 0; loss = mean(pred), so d loss / d w = mean(x): easy by hand.
    model = keras.Sequential([keras.Input((1,)),
                              keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros")])
    return model, lambda y, pred: tf.reduce_mean(pred)


def test_walk_through_accumulator_values():
    model, loss_fn = _linear()
    acc = Accumulators(model.trainable_variables)
    x = np.arange(1.0, 7.0, dtype=np.float32).reshape(6, 1)  # B = 6, three micro-batches of 2
    # S_i = D_i * L_i = 2 * mean(pred_i), so dS_i/dw = 2 * mean(x_i) = x_a + x_b; D_i = 2.
    expected = [1 + 2, 1 + 2 + 3 + 4, 21]
    for i, want in enumerate(expected):
        xi = x[2 * i:2 * i + 2]
        with tf.GradientTape() as tape:
            s, d = loss_terms(model, loss_fn, xi, xi)
        acc.accumulate(Sums(s, tape.gradient(s, model.trainable_variables), d))
        np.testing.assert_allclose(acc.variables[0].numpy(), [[want]], rtol=1e-6)
    sums = acc.sums()
    np.testing.assert_allclose(float(sums.norm), 6.0)
    np.testing.assert_allclose((sums.grads[0] / sums.norm).numpy(), [[3.5]])  # mean(x): the large batch
    acc.reset()
    np.testing.assert_allclose([acc.variables[0].numpy()[0, 0], float(acc.norm)], [0.0, 0.0])
    assert not acc.variables[0].trainable


def test_accumulator_of_an_untouched_variable_reports_none():
    model, _ = _linear()
    unused = tf.Variable(1.0)
    acc = Accumulators(model.trainable_variables + [unused])
    acc.accumulate(Sums(tf.constant(1.0), [tf.ones((1, 1)), None], tf.constant(1.0)))
    assert acc.sums().grads[1] is None


def _classifier():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="tanh"),
                              keras.layers.Dense(2)])
    rng = np.random.default_rng(0)
    return model, rng.normal(size=(11, 3)).astype("float32"), rng.integers(0, 2, 11)


def test_fused_grads_equal_the_large_batch_gradient_for_uneven_micro_batches():
    model, x, y = _classifier()
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    big_loss, big = loss_and_grads(model, loss_fn, x, y)
    loss, grads = tf.function(lambda x, y: fused_grads(model, loss_fn, x, y, [4, 4, 3]))(x, y)
    np.testing.assert_allclose(float(loss), float(big_loss), rtol=1e-6)
    for g, b in zip(grads, big):
        np.testing.assert_allclose(g.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)
    # Sizes as a constant tensor (as gradlab.studies.runs.noise passes them) are read at trace time.
    sizes = tf.constant([4, 4, 3])
    loss, grads = tf.function(lambda x, y: fused_grads(model, loss_fn, x, y, sizes))(x, y)
    np.testing.assert_allclose(float(loss), float(big_loss), rtol=1e-6)


def test_one_split_whether_the_batch_dimension_is_known_or_not():
    # The split is split_sizes(B, 4) in both cases (fit traces with an unknown B; step knows
    # B). S_i = n_i^2 shows it: 11 -> 3,3,3,2 (9+9+9+4 = 31), 13 -> 4,3,3,3 (16+27 = 43),
    # 3 -> 1,1,1 (3), 8 -> 2,2,2,2 (16), 0 -> nothing (an empty replica shard).
    v = tf.Variable(1.0)

    def micro(part):
        n = tf.cast(tf.shape(part[0])[0], tf.float32)
        return n * n * v, n

    unknown = tf.function(lambda x: loop_sum(micro, (x,), [v], 4), input_signature=[tf.TensorSpec([None, 2])])
    known = tf.function(lambda x: loop_sum(micro, (x,), [v], 4))
    for rows, squares in ((11, 31), (13, 43), (3, 3), (8, 16), (0, 0)):
        assert squares == sum(n * n for n in (split_sizes(rows, 4) if rows else []))
        runs = [unknown] + ([known] if rows else [])
        for run in runs:
            sums = run(tf.zeros([rows, 2]))
            assert (float(sums.loss), float(sums.norm), float(sums.grads[0])) == (squares, rows, squares), rows


def test_unknown_batch_dimension_equals_the_large_batch():
    model, x, y = _classifier()
    per_example = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def micro(part):
        return tf.reduce_sum(per_example(part[1], model(part[0]))), tf.cast(tf.shape(part[1])[0], tf.float32)

    spec = (tf.TensorSpec([None, 3]), tf.TensorSpec([None], tf.int64))
    run = tf.function(lambda x, y: loop_sum(micro, (x, y), model.trainable_variables, 4),
                      input_signature=spec)
    sums = run(x, y)
    big_loss, big = loss_and_grads(model, per_example, x, y)
    np.testing.assert_allclose(float(sums.norm), 11.0)
    np.testing.assert_allclose(float(sums.loss / sums.norm), float(big_loss), rtol=1e-6)
    for g, b in zip(sums.grads, big):
        np.testing.assert_allclose((g / sums.norm).numpy(), b.numpy(), rtol=1e-5, atol=1e-7)
    run(x[:3], y[:3])  # fewer rows than accum_steps: the same trace, micro-batches of 1
    assert run.experimental_get_tracing_count() == 1


def test_overlap_is_the_loops_parallel_iterations():
    # one micro-batch's activations alive at a time by default; `overlap` micro-batches if asked
    v = tf.Variable(1.0)
    micro = lambda part: (tf.reduce_sum(part[0]) * v, tf.cast(tf.shape(part[0])[0], tf.float32))
    for overlap in (1, 2):
        run = tf.function(lambda x: loop_sum(micro, (x,), [v], 4, overlap=overlap))
        graph = run.get_concrete_function(tf.zeros([8, 2])).graph
        loops = [op for op in graph.get_operations() if op.type in ("While", "StatelessWhile")]
        assert loops and {op.get_attr("parallel_iterations") for op in loops} == {overlap}


def test_under_xla_each_micro_batch_is_read_in_place_not_the_batch_copied():
    # XLA materialises a slice that feeds a while loop: cutting the rest of the batch off
    # before the loop copied (N - 1) / N of the inputs (at 4,000 MNIST rows, N = 4: 9 MB, as
    # much again as the step's own activations). Each micro-batch is now a dynamic-slice of
    # static size inside the loop: no array in the compiled step has more rows than one
    # micro-batch but the inputs themselves. Whether fit traced the batch as known or None.
    import re
    v = tf.Variable(tf.ones([8, 3]))
    micro = lambda part: (tf.reduce_sum(tf.tanh(part[0] @ v)), tf.cast(tf.shape(part[0])[0], tf.float32))
    x = tf.fill([64, 8], 0.1)
    for signature in (None, [tf.TensorSpec([None, 8])]):
        run = tf.function(lambda x: loop_sum(micro, (x,), [v], 4), jit_compile=True,
                          input_signature=signature)
        hlo = run.experimental_get_compiler_ir(x)(stage="optimized_hlo")
        rows = {int(m) for m in re.findall(r"f32\[(\d+),8\]", hlo)}
        assert rows == {64, 16}, (signature, sorted(rows))  # the input, then micro-batches of 16
        sums = run(x)
        np.testing.assert_allclose(sums.grads[0].numpy(),
                                   np.full([8, 3], 6.4 * (1 - np.tanh(0.8) ** 2)), rtol=1e-5)


_XLA_PEAKS = r'''
import json, numpy as np, tensorflow as tf
from gradlab.core.accumulate import loop_sum
tf.random.set_seed(0)
w1, w2 = tf.Variable(tf.random.normal([256, 512]) * 0.05), tf.Variable(tf.random.normal([512, 10]) * 0.05)
x, y = tf.random.normal([2000, 256]), tf.random.uniform([2000], 0, 10, tf.int32)
def micro(part):
    logits = tf.nn.relu(part[0] @ w1) @ w2
    s = tf.nn.sparse_softmax_cross_entropy_with_logits(part[1], logits)
    return tf.reduce_sum(s), tf.cast(tf.shape(part[0])[0], tf.float32)
peaks, sums = {}, {}
for n in (1, 2, 3):
    run = tf.function(lambda x, y: loop_sum(micro, (x, y), [w1, w2], n), jit_compile=True)
    run(x[:1999] if n == 3 else x, y[:1999] if n == 3 else y)
    tf.config.experimental.reset_memory_stats("CPU:0")
    base = tf.config.experimental.get_memory_info("CPU:0")["current"]
    s = run(x[:1999] if n == 3 else x, y[:1999] if n == 3 else y)
    peaks[n] = tf.config.experimental.get_memory_info("CPU:0")["peak"] - base
    sums[n] = float(tf.reduce_sum(s.grads[0]) / s.norm)
print(json.dumps({"peaks": peaks, "sums": sums}))
'''


def test_under_xla_a_micro_batch_added_without_a_loop_waits_for_the_one_before():
    # XLA ignores control dependencies: at N = 2 (no loop: one micro-batch, then one more)
    # its scheduler ran both micro-batches side by side, peak as high as the whole batch's.
    # 1,999 rows in 3 micro-batches are 667 + 666 + 666: a count of 1, then a count of 1.
    import json, os, subprocess, sys
    env = dict(os.environ, TF_CPU_ALLOCATOR_USE_BFC="true", TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run([sys.executable, "-c", _XLA_PEAKS], env=env, capture_output=True,
                         text=True, timeout=300, check=True).stdout
    found = json.loads(out.strip().splitlines()[-1])
    peaks = {int(n): p for n, p in found["peaks"].items()}
    # activations of 2,000 rows x 512 hidden units, 4 MB a copy, and their gradients dominate
    # the peak: both micro-batches alive would hold more than the whole batch (N = 1). (Before
    # the DynamicSlice, XLA folded the batch into the program, and N = 2 read 0.6 of N = 1.)
    assert peaks[2] < 0.9 * peaks[1] and peaks[3] < 0.6 * peaks[1], peaks
    sums = list(found["sums"].values())
    np.testing.assert_allclose(sums[1], sums[0], rtol=1e-4)  # N = 2 is still the large batch's gradient


_XLA_COMPILES = r"""
import tensorflow as tf
from gradlab.core.accumulate import loop_sum
w = tf.Variable(tf.ones([8, 3]))
micro = lambda part: (tf.reduce_sum(part[0] @ w), tf.cast(tf.shape(part[0])[0], tf.float32))
run = tf.function(lambda x: loop_sum(micro, (x,), [w], 2), jit_compile=True)
for k in range(3):  # three batches of the same shape: one compilation
    run(tf.fill([6, 8], float(k)))
"""


def test_under_xla_an_update_of_two_micro_batches_compiles_once_for_every_batch():
    # The second micro-batch reads its rows from a start computed from the first's sums. As a
    # tf.slice, XLA took the batch as a compile-time constant and compiled every call anew
    # (2 s an update of a small MLP, where the compiled update takes 4 ms). XLA logs each one.
    import os, subprocess, sys
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="0", TF_CPP_VMODULE="xla_compiler=1")
    err = subprocess.run([sys.executable, "-c", _XLA_COMPILES], env=env, capture_output=True,
                         text=True, timeout=300, check=True).stderr
    compiles = [l.split("CompileFunction ")[1].split("[")[0] for l in err.splitlines()
                if "CompileFunction __inference" in l and "_XlaMustCompile=true" in l]
    # (gradlab's probe of XLA's slice compiles a function of its own, once)
    assert compiles and len(compiles) == len(set(compiles)), compiles
