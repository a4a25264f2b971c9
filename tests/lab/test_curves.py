"""The lab's curves, from hand-made results: differences, bands and x axes by value."""
import numpy as np
import pytest
from matplotlib.figure import Figure

from gradlab.lab import curves

from figure_data import UPDATES, group, result


def test_reference_difference_is_the_largest_gap_over_seeds():
    ref = {s: result(strategy="large_batch", seed=s, accuracy=0.90) for s in (0, 1)}
    off = [result(accum_steps=4, micro_batch=25, seed=s, accuracy=0.88 + 0.01 * s,
                  losses=ref[s].losses + (0.1 if s else 0.3) * (np.arange(UPDATES) == 5))
           for s in (0, 1)]
    found = curves.reference_difference(group(*off, reference=ref))
    delta, worst, accuracy = found
    assert delta[5] == pytest.approx(0.3) and worst == pytest.approx(0.3)
    assert np.count_nonzero(delta) == 1
    assert accuracy == pytest.approx(np.mean([0.88 - 0.90, 0.89 - 0.90]))
    # the legend's yardstick, by hand: both seeds' losses together, ||off - ref|| / ||ref||
    loss = np.linspace(2.0, 0.5, UPDATES)
    m = np.sqrt(0.3 ** 2 + 0.1 ** 2) / np.sqrt(2 * np.sum(loss ** 2))
    close = curves.difference_verdict(group(*off, reference=ref))
    assert close == f"miss {100 * m:.3g}%" == "miss 2.67%"
    assert curves.difference_text(close, accuracy) == "miss 2.67%, accuracy -1.5 pts"
    assert curves.reference_difference(group(*off)) is None  # no twin, no difference
    same = group(ref[0], reference={0: ref[0]})
    assert curves.reference_difference(same) is None  # a large batch is not compared with itself


def test_the_legend_says_exact_within_ten_spacings_at_the_largest_loss():
    ref = result(strategy="large_batch")
    step = float(np.spacing(np.float32(2.0)))  # the largest loss is 2.0
    three = result(accum_steps=4, micro_batch=25, losses=ref.losses + 3 * step * (np.arange(UPDATES) == 7))
    assert curves.difference_verdict(group(three, reference={0: ref})) == "exact (3.0 spacings)"
    same = result(accum_steps=4, micro_batch=25)
    assert curves.difference_verdict(group(same, reference={0: ref})) == "exact (0 spacings, bit for bit)"
    blown = result(accum_steps=4, micro_batch=25, losses=np.where(np.arange(UPDATES) > 30, np.nan, ref.losses))
    assert curves.difference_verdict(group(blown, reference={0: ref})) == "miss (a loss is not finite)"
    assert curves.difference_verdict(group(same)) is None  # no twin


def test_a_running_seed_counts_only_where_it_has_got_to():
    mean, std, count = curves.mean_std(curves.stack([np.array([1.0, 3.0, 5.0]), np.array([3.0])]))
    np.testing.assert_allclose(mean, [2.0, 3.0, 5.0])
    np.testing.assert_allclose(std, [np.sqrt(2.0), 0.0, 0.0])
    assert count.tolist() == [2, 1, 1]
    ref = result(strategy="large_batch")
    partial = result(accum_steps=4, micro_batch=25, losses=ref.losses[:12] + 0.01)
    delta, worst, accuracy = curves.reference_difference(group(partial, reference={0: ref}))
    assert len(delta) == 12 and worst == pytest.approx(0.01) and accuracy is None


def test_x_axes():
    g = group(result(accum_steps=4, micro_batch=25, seconds_per_update=0.01))
    np.testing.assert_allclose(curves.x_of(g, [1, 2], "updates"), [1, 2])
    np.testing.assert_allclose(curves.x_of(g, [1, 2], "examples"), [100, 200])
    np.testing.assert_allclose(curves.x_of(g, [1, 2], "seconds"), [0.01, 0.02])


def test_the_loss_band_is_the_moving_average_over_full_windows():
    ax = Figure().subplots()
    g = group(result(seed=0, losses=np.arange(UPDATES, dtype=float)),
              result(seed=1, losses=np.arange(UPDATES, dtype=float) + 2), label="two seeds")
    line = curves.loss_band(ax, g, "updates", "C0", False, window=5)
    assert line.get_label() == "two seeds"
    y = line.get_ydata()
    assert np.isnan(y[:2]).all() and np.isnan(y[-2:]).all()  # no ragged ends
    np.testing.assert_allclose(y[2:-2], np.arange(2, UPDATES - 2) + 1.0)  # mean of the seeds
    assert len(ax.collections) == 1  # the ± std band


def test_a_group_may_carry_its_own_line_style():
    # lesson 17 dashes the large batch's cosine curve, which the exact fused curve hides otherwise
    ax = Figure().subplots()
    dashed = group(result(seed=0), label="dashed")
    dashed.linestyle = "--"
    assert curves.loss_band(ax, dashed, "updates", "black", False, window=5).get_linestyle() == "--"
    assert curves.loss_band(ax, group(result(seed=0)), "updates", "C0", False, window=5).get_linestyle() == "-"
    twin = group(result(seed=1), label="twin")  # its |Δ| line is dashed too
    dashed.reference = {0: twin.results[0]}
    curves.difference_line(ax, dashed, "updates", "black", False, curves.reference_difference(dashed))
    assert ax.get_lines()[-1].get_linestyle() == "--"


def test_a_dotted_mean_line_lies_above_the_lines_drawn_after_it():
    # lesson 17's large batch: drawn first, dotted, it shows through the two ways that coincide with it
    ax = Figure().subplots()
    dotted = group(result(seed=0), label="reference")
    dotted.linestyle = ":"
    below = curves.loss_band(ax, dotted, "updates", "black", False, window=5)
    after = [curves.loss_band(ax, group(result(seed=0)), "updates", c, False, window=5) for c in ("C0", "C1")]
    assert below.get_linestyle() == ":" and all(below.get_zorder() > line.get_zorder() for line in after)
    assert below.get_zorder() < ax.text(0, 0, "a label").get_zorder()  # still under texts and legends
