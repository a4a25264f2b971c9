"""What lesson 17 reads off the lab: Measure's report, each seed's accuracy gap, the pictures.

    groups, picture = measure_report(lab)   # press Measure; print one line per way; its picture
    paired_gaps(way, reference)             # each seed's final accuracy minus its reference's, in points
    seed_accuracies(group)                  # each seed's final test accuracy, in points, in seed order
    window_mean(group, start, stop)         # the mean training loss of updates start+1 to stop, over seeds
    compare_picture(lab, groups, labels, title)   # the reference dotted black, the next dashed red
    training_set_statistics(model, x)       # "precise BN": BatchNorm's moving statistics from all of x
    settle(group, data)                     # retrain each seed; test as trained, then with those statistics

A Measure's groups are (the large batch, gradlab's way, the other way): `Lab.measure`.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

import warnings

import keras
import numpy as np

from ..studies.yardstick import verdict

COLORS = ("black", "tab:red", "tab:purple")  # the large batch, gradlab's way, the other way


def paired_gaps(way, reference):
    """Each seed's final test accuracy in `way` minus the accuracy of `reference`'s run with
    the same seed, in points (100 × the fraction), in `way`'s seed order. KeyError if
    `reference` has no run of one of `way`'s seeds."""
    ref = {r.config.seed: r.accuracy for r in reference.results}
    missing = sorted({r.config.seed for r in way.results} - set(ref))
    if missing:
        raise KeyError(f"the reference has no run of seed(s) {missing}")
    return np.array([100 * (r.accuracy - ref[r.config.seed]) for r in way.results])


def seed_accuracies(group):
    """Each seed's final test accuracy, in points, in seed order."""
    return [100 * r.accuracy for r in sorted(group.results, key=lambda r: r.config.seed)]


def window_mean(group, start, stop):
    """The mean training loss of updates `start + 1` to `stop` (`losses[start:stop]`), over
    every seed of `group`. ValueError for an empty or out-of-range window."""
    updates = min(len(r.losses) for r in group.results)
    if not 0 <= start < stop <= updates:
        raise ValueError(f"a window of updates {start + 1} to {stop} does not fit {updates} updates")
    return float(np.mean([r.losses[start:stop] for r in group.results]))


def way_names(setting):
    """The names of Measure's second and third runs for a setting."""
    if setting.startswith("BatchNorm"):
        return ("per update", "per micro-batch")
    return ("gradlab's way", "Keras's way")


def report_lines(groups, setting, accum_steps):
    """One line per accumulating way of a Measure's `groups`: its losses' verdict against
    the large batch's (every seed's losses together) and its accuracy gap, seed by seed."""
    large, *ways = groups
    reference = [r.losses for r in large.results]
    batchnorm = setting.startswith("BatchNorm")
    lines = []
    for name, group in zip(way_names(setting), ways):
        row = (f"BatchNorm, N = {accum_steps}, statistics {name}" if batchnorm
               else f"{setting}, N = {accum_steps}, {name}")
        gaps = ", ".join(f"{c:+.1f}" for c in paired_gaps(group, large))
        lines.append(f"{row}: losses {verdict([r.losses for r in group.results], reference)}; "
                     f"accuracy gap by seed {gaps} points")
    return lines


def compare_picture(lab, groups, labels, title, dashed=1, dotted=0, colors=COLORS):
    """`lab.picture` of `groups`: the first (a reference) dotted, the second dashed and drawn
    last, coloured `colors` in order (black, red, purple unless given)."""
    if len(colors) < len(groups):
        raise ValueError(f"{len(groups)} groups and only {len(colors)} colours")
    return lab.picture(groups=list(groups), labels=list(labels), dashed=dashed, dotted=dotted,
                       colors=list(colors[:len(groups)]), title=title)


def measure_report(lab):
    """Press Measure at the lab's controls: show only its three groups, measure, print
    `report_lines`, and return `(groups, picture)`: the large batch, gradlab's way and the
    other way, then their `compare_picture`. ValueError (with the lab's status line) if the
    controls describe no run."""
    setting, N, b = lab.setting.value, lab.accum_steps.value, lab.micro_batch.value
    lab.show(lab.groups, False)  # one setting at a time on the widget's plot
    groups = lab.measure()
    if groups is None:
        raise ValueError(f"Measure ran nothing: {lab.status.value}")
    lab.show(groups)  # its own groups, run before or not
    for line in report_lines(groups, setting, N):
        print(line)
    first, second = way_names(setting)
    other = second + (" (as Keras; gradlab's emulation)" if setting.startswith("BatchNorm") else "")
    seeds = len(groups[0].results)
    picture = compare_picture(lab, groups, ["large batch (dotted)", f"{first} (dashed)", other],
                              f"{setting}: N = {N}, b = {b}, {seeds} seed{'s' * (seeds != 1)}")
    return groups, picture


def training_set_statistics(model, x):
    """Set each `BatchNormalization` layer of the Sequential `model`, in order, to its inputs'
    mean and (biased) variance over all of `x`: the population statistics of "precise BN"
    (Yuxin Wu and Justin Johnson, "Rethinking 'Batch' in BatchNorm", 2021,
    https://arxiv.org/abs/2105.07576) in place of the moving averages. Each layer's inputs
    pass through the layers before it at inference (earlier BatchNorms already set).
    Returns the layers set; ValueError if `model` is not Sequential or has none."""
    if not isinstance(model, keras.Sequential):
        raise ValueError(f"a keras.Sequential model, not {type(model).__name__}")
    norms = [i for i, layer in enumerate(model.layers) if isinstance(layer, keras.layers.BatchNormalization)]
    if not norms:
        raise ValueError("the model has no BatchNormalization layer")
    for i in norms:
        inputs = np.asarray(x, dtype="float32")
        for layer in model.layers[:i]:
            inputs = layer(inputs, training=False)
        inputs = np.asarray(inputs, dtype="float64")
        axes = tuple(range(inputs.ndim - 1))  # every axis but the features'
        norm = model.layers[i]
        norm.moving_mean.assign(inputs.mean(axis=axes).astype(norm.moving_mean.dtype))
        norm.moving_variance.assign(inputs.var(axis=axes).astype(norm.moving_variance.dtype))
    return [model.layers[i] for i in norms]


def accuracy_points(model, x, y):
    """The share of `x` whose largest logit (inference) is its label, in points."""
    return float(100 * np.mean(np.argmax(np.asarray(model(x, training=False)), axis=-1) == np.asarray(y)))


def settle(group, data, train=None):
    """Retrain each run of `group` (seed order) and test it twice on `data.x_test`: as trained,
    then after `training_set_statistics(model, data.x_train)`. Returns `(as_trained, settled,
    models)`, accuracies in points. `train(config) -> (run, model)`: the course's
    `experiments.train` unless given."""
    if train is None:
        from ..studies.runs import experiments
        train = experiments.train
    as_trained, settled, models = [], [], []
    for r in sorted(group.results, key=lambda r: r.config.seed):
        with warnings.catch_warnings(action="ignore"):  # BatchNorm makes accumulation inexact: known here
            _, model = train(r.config)
        as_trained.append(accuracy_points(model, data.x_test, data.y_test))
        training_set_statistics(model, data.x_train)
        settled.append(accuracy_points(model, data.x_test, data.y_test))
        models.append(model)
    return as_trained, settled, models
