"""What lesson 17 reads off the lab: Measure's report, each seed's accuracy gap, the pictures.

    groups, picture = measure_report(lab)   # press Measure; print one line per way; its picture
    paired_gaps(way, reference)             # each seed's final accuracy minus its reference's, in points
    seed_accuracies(group)                  # each seed's final test accuracy, in points, in seed order
    window_mean(group, start, stop)         # the mean training loss of updates start+1 to stop, over seeds
    compare_picture(lab, groups, labels, title)   # the reference dotted black, the next dashed red

A Measure's groups are (the large batch, gradlab's way, the other way): `Lab.measure`.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

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
