"""How a float32 sum's rounding grows with its number of terms, on log-log axes.

    one at a time:   the median (and worst) error over several sequences, in spacings at the sum
    guides:          sqrt(terms), the growth of errors of either sign that partly cancel, and the
                     worst case, (terms - 1) eps/2 |sum|, which grows in proportion to the terms
    blocked sums:    a sum that adds in blocks (np.sum, tf.reduce_sum, a matmul) at the largest count,
                     the markers a hair apart around it and labelled with that count (drawn to
                     its right, they read as sums of more terms)

Lesson: notebooks/22-how-this-course-measures.ipynb
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def plot_rounding_growth(terms, running, worst_case, blocked=(), rounding=10, guide="first"):
    """The one-at-a-time sum's median and worst error against the number of terms, with a
    sqrt(terms) slope guide through the first median, the worst-case bound (in proportion to the
    terms) and a line at the
    yardstick; each blocked sum as a marker at the largest count, its median with a bar to its worst
    (several such markers spread a few percent either side of that count, so none hides another,
    and each legend entry names the count).

    Args:
        terms: the term counts, increasing.
        running: one array of errors (spacings, one per sequence) per count.
        worst_case: the worst-case bound at each count, in spacings.
        blocked: {name: errors at the largest count} for sums that add in blocks.
        rounding: the yardstick, in spacings (a horizontal line).
        guide: where the sqrt(terms) guide runs: "first", through the first median; "fit", the
            least-squares fit in log space through every median, c sqrt(terms) with
            log c = mean(log median_k - log(terms_k) / 2).
    Returns:
        a matplotlib Figure with 1 Axes (both axes log-scaled), already closed in pyplot.
    """
    terms = np.asarray(terms, dtype=float)
    running = [np.asarray(e, dtype=float) for e in running]
    if len(running) != len(terms) or len(worst_case) != len(terms) or terms.size < 2:
        raise ValueError("one error array and one worst case per term count, two counts at least")
    if guide not in ("first", "fit"):
        raise ValueError(f'guide must be "first" or "fit", got {guide!r}')
    fig, ax = plt.subplots(figsize=(9.5, 4.2))
    ax.plot(terms, worst_case, ":", color="0.35", gid="worst case", label="worst case, in proportion to the terms")
    medians = np.array([np.median(e) for e in running])
    if guide == "first":
        line, where = medians[0] * np.sqrt(terms / terms[0]), "from the first median"
    else:  # "fit": the constant c of c sqrt(terms) closest to every median on the log axes
        line, where = np.exp(np.mean(np.log(medians) - np.log(terms) / 2)) * np.sqrt(terms), "fitted"
    ax.plot(terms, line, "--", color="0.55", gid="sqrt",
            label=r"slope guide: $\propto\sqrt{\mathrm{terms}}$, " + where)
    ax.axhline(rounding, color="tab:red", lw=1, gid="rounding", label=f"{rounding} spacings (the yardstick)")
    ax.plot(terms, medians, "o-", color="tab:blue", gid="median",
            label="one at a time: median")
    ax.plot(terms, [e.max() for e in running], "v", color="tab:blue", mfc="none", gid="worst",
            label="one at a time: worst")
    blocked = dict(blocked)  # the default, (), draws none
    for k, (name, errors) in enumerate(blocked.items()):
        errors = np.asarray(errors, dtype=float)
        x, mid = terms[-1] * 1.06 ** (k - (len(blocked) - 1) / 2), np.median(errors)  # centred on the count
        ax.errorbar([x], [mid], yerr=[[0], [errors.max() - mid]], fmt="s", capsize=3, gid=name,
                    color=f"C{k + 2}", label=f"{name}, {terms[-1]:,.0f} terms: median, bar to worst")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("terms in the sum")
    ax.set_ylabel("error, float32 spacings at the sum")
    ax.set_title("A float32 sum's rounding grows with its terms")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)  # beside, not on, the data
    fig.tight_layout()
    plt.close(fig)
    return fig
