"""The fit schedule against Keras's own fit: the updates it counts, the rows of each, and the
step its learning-rate schedule read (recorded by a callback on real Keras training)."""
import keras
import numpy as np
import pytest
import tensorflow as tf

from gradlab.studies.figures.fit_schedule import fit_schedule, plot_fit_schedule, plot_shard_weights


class Record(keras.callbacks.Callback):
    """After each fit batch: the optimizer's step counter (Keras's `iterations`)."""

    def __init__(self):
        super().__init__()
        self.steps = []

    def on_train_batch_end(self, batch, logs=None):
        self.steps.append(int(self.model.optimizer.iterations))


def keras_updates(batch_size, accum, rows=37, epochs=2):
    x, y = np.zeros((rows, 3), "float32"), np.zeros((rows,), "int64")
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer=keras.optimizers.SGD(0.1, gradient_accumulation_steps=accum),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    record = Record()
    model.fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=False, verbose=0, callbacks=[record])
    return record.steps


def test_updates_match_keras_fit_across_epochs():
    got = fit_schedule(37, 8, 4, 2)  # 37 rows: batches of 8 (last 5); Keras micro-batches of 2 (last 1)
    large = keras_updates(8, None)
    assert len(got["large batch"]) == large[-1] == 10 == len(got["AccumulatingModel"])
    assert got["large batch"][4] == (32, 37, 4) and got["large batch"][5] == (37, 45, 5)
    steps = keras_updates(2, 4)  # Keras's iterations after each micro-batch: +1 every 4th
    applied = [m for m in range(len(steps)) if steps[m] > (steps[m - 1] if m else 0)]
    assert [k for _, _, k in got["Keras accumulation"]] == applied == list(range(3, 38, 4))
    # update 5 spans epoch 1's last three micro-batches (rows 32-37, the last of 1 row) and
    # epoch 2's first (its rows 0-2, counted across epochs as 37-39)
    assert got["Keras accumulation"][4] == (32, 39, 19)


def test_the_figure_and_bad_input():
    fig = plot_fit_schedule(rows=37, batch_size=8, accum_steps=4, epochs=2)
    lanes, lr = fig.axes
    assert [t.get_text() for t in lanes.get_yticklabels()] == ["large batch", "AccumulatingModel", "Keras accumulation"]
    assert np.allclose(lr.lines[2].get_ydata(), [0.1 * 0.9 ** k for k in range(3, 38, 4)])
    # the last batch of 5 in both epochs of the large batch and AccumulatingModel; Keras's window
    # across the epochs' end: epoch 1's rows 32-36 (2 + 2 + 1) and epoch 2's first micro-batch of 2;
    # Keras's 9th and last update ends at row 71 of 74: epoch 2's last 2 micro-batches (2 + 1) wait
    assert [t.get_text() for t in lanes.texts] == ["5", "5", "5", "5", "5 + 2", "3 rows waiting"]
    with pytest.raises(ValueError, match="accum_steps must divide batch_size, got 3 and 8"):
        fit_schedule(37, 8, 3, 2)
    with pytest.raises(ValueError, match="rows must be a positive integer, got 0"):
        fit_schedule(0, 8, 4, 1)
    with pytest.raises(ValueError, match="decay must be a number > 0, got -1"):
        plot_fit_schedule(decay=-1)


def test_shard_weights_are_the_mean_of_means_gradient():
    # oracle: the gradient of the replicas' average of shard means with respect to each row's loss
    losses = tf.Variable(np.ones(11, "float32"))
    with tf.GradientTape() as tape:
        mean_of_means = (tf.reduce_mean(losses[:6]) + tf.reduce_mean(losses[6:])) / 2
    oracle = tape.gradient(mean_of_means, losses).numpy()
    (ax,) = plot_shard_weights((6, 5)).axes
    heights = [p.get_height() for p in ax.patches]
    assert np.allclose(heights, oracle) and np.allclose(oracle, [1 / 12] * 6 + [1 / 10] * 5)
    assert np.allclose(ax.lines[0].get_ydata(), 1 / 11)  # the large batch's 1 / B
    labels = ax.get_legend_handles_labels()[1]  # replicas indexed from 0, as the lessons' g_0, g_1
    assert sorted(labels) == ["replica 0: 6 rows, each 1/12", "replica 1: 5 rows, each 1/10",
                              "the large batch: each 1/11"], labels
    with pytest.raises(ValueError, match="a shard's rows must be a positive integer, got 0"):
        plot_shard_weights((6, 0))


class RatesAtUpdates(keras.callbacks.Callback):
    """The learning rate Keras holds as each update's last optimizer step starts."""

    def __init__(self, every):
        super().__init__()
        self.every, self.rates = every, []

    def on_train_batch_begin(self, batch, logs=None):
        if int(self.model.optimizer._iterations) % self.every == self.every - 1:
            self.rates.append(float(self.model.optimizer.learning_rate))


def test_measured_rates_are_drawn_over_the_rule():
    # oracle: Keras's own fit with an ExponentialDecay schedule, its rate read by a callback
    x, y = np.zeros((37, 3), "float32"), np.zeros((37,), "int64")
    measured = {}
    for name, accum, batch_size in (("large batch", None, 8), ("Keras accumulation", 4, 2)):
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
        decay = keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.9)
        model.compile(optimizer=keras.optimizers.SGD(decay, gradient_accumulation_steps=accum),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        record = RatesAtUpdates(accum or 1)
        model.fit(x, y, batch_size=batch_size, epochs=2, shuffle=False, verbose=0, callbacks=[record])
        measured[name] = record.rates
    fig = plot_fit_schedule(rows=37, batch_size=8, accum_steps=4, epochs=2, measured=measured)
    _, lr = fig.axes
    rule = {line.get_label().split(":")[0]: line for line in lr.lines if ":" in line.get_label()}
    drawn = {line.get_label().removesuffix(", measured"): line for line in lr.lines
             if line.get_label().endswith(", measured")}
    assert sorted(drawn) == ["Keras accumulation", "large batch"]
    for name, line in drawn.items():
        assert np.allclose(line.get_ydata(), measured[name]) and np.allclose(line.get_xdata(), rule[name].get_xdata())
        assert np.allclose(line.get_ydata(), rule[name].get_ydata(), rtol=1e-6)  # Keras follows the rule
    assert len(rule) == 3 and len(lr.lines) == 3 + 2 + 1  # three rules, two measured, the epoch line
    with pytest.raises(ValueError, match="one rate per update .* got 3 for 'large batch' .10 updates."):
        plot_fit_schedule(rows=37, batch_size=8, accum_steps=4, epochs=2, measured={"large batch": [0.1] * 3})


