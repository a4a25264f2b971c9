"""Lessons 07 and 08's figures: token weights, BatchNorm error vs micro-batch size, dropout gap vs draws,
EMA coefficients, the learning rate each update applies, and which update applies each micro-batch."""
import matplotlib.pyplot as plt
import numpy as np
import pytest

from gradlab.studies.figures.pitfall_plots import (plot_batchnorm_error, plot_dropout_gap,
                                                   plot_ema_coefficients,
                                                   plot_token_and_sequence_loss, plot_token_weights,
                                                   plot_update_timeline, plot_float16_range,
                                                   plot_clip_sweep, plot_clip_curves)


def test_plot_token_weights_draws_each_sequence_at_its_tokens_beside_the_share_at_1():
    # worked by hand: tokens ω_j = 1, 3, 4, so D = 8 and a token's share is 1/8; N = 2, naive weight 1/(N D_i)
    # split 1, 3 | 4: D_i = 4 and 4, each token weighs 1/8 -> ratio 1 everywhere
    # split 1 | 3, 4: D_i = 1 -> 1/2, ratio 4; D_i = 7 -> 1/14, ratio 8/14
    tokens = [1, 3, 4]
    ratios = {"1, 3 | 4": [1.0, 1.0, 1.0], "1 | 3, 4": [4.0, 8 / 14, 8 / 14]}
    fig = plot_token_weights(tokens, ratios)
    ax, = fig.axes
    assert not plt.fignum_exists(fig.number)
    drawn = {line.get_label(): line for line in ax.lines}
    assert np.allclose(drawn["1 | 3, 4"].get_xdata(), [1, 3, 4])
    assert np.allclose(drawn["1 | 3, 4"].get_ydata(), [4.0, 0.5714286, 0.5714286])
    assert drawn["1, 3 | 4"].get_linestyle() == "None" and drawn["1, 3 | 4"].get_marker() != drawn["1 | 3, 4"].get_marker()
    share, = [line for line in ax.lines if line.get_linestyle() == "--"]
    assert np.allclose(share.get_ydata(), [1, 1]) and "1" in share.get_label()
    assert ax.get_xscale() == ax.get_yscale() == "log" and "$1/D$" in ax.get_ylabel()
    assert "$\\omega_j$" in ax.get_xlabel() and "1/D" in ax.get_title()  # the lesson's D and ω_j, not W, w_j
    assert "W" not in ax.get_ylabel() + ax.get_xlabel() + ax.get_title() and "w_j" not in ax.get_xlabel()
    fig.canvas.draw()
    lo, hi = ax.get_ylim()
    assert "1" in [t.get_text() for t in ax.get_yticklabels() if lo <= t.get_position()[1] <= hi]
    assert np.isclose(lo, (8 / 14) / 1.5) and np.isclose(hi, 4.0 * 1.5)  # nothing clipped
    label, = [t for t in ax.texts]
    assert label.get_text() == "4.00" and np.allclose(label.xy, (1, 4.0))  # the highest, at 1 token
    with pytest.raises(ValueError, match="one ratio per sequence"):
        plot_token_weights(tokens, {"short": [1.0, 2.0]})
    with pytest.raises(ValueError, match="positive"):
        plot_token_weights([0, 1], {"a": [1.0, 1.0]})
    with pytest.raises(ValueError, match="at least one"):
        plot_token_weights(tokens, {})


def test_plot_token_weights_zoom_redraws_one_series_on_a_linear_axis_spanning_it_and_1():
    # worked by hand: ratios 1.2, 0.9, 0.95 and the line at 1 -> span 0.9 .. 1.2 = 0.3, padded by 0.03
    tokens = [1, 3, 4]
    ratios = {"sorted": [4.0, 8 / 14, 8 / 14], "mean": [1.2, 0.9, 0.95]}
    fig = plot_token_weights(tokens, ratios, zoom="mean")
    ax, zax = fig.axes
    assert not plt.fignum_exists(fig.number)
    drawn = {line.get_label(): line for line in zax.lines}
    assert set(drawn) == {"mean", "large batch, and the fix: 1"}
    assert np.allclose(drawn["mean"].get_xdata(), [1, 3, 4]) and np.allclose(drawn["mean"].get_ydata(), [1.2, 0.9, 0.95])
    assert np.allclose(drawn["large batch, and the fix: 1"].get_ydata(), [1, 1])
    assert zax.get_yscale() == "linear" and zax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert np.allclose(zax.get_ylim(), (0.87, 1.23))
    assert {line.get_label() for line in ax.lines} >= {"sorted", "mean"}  # the first panel is unchanged
    assert len(plot_token_weights(tokens, ratios).axes) == 1
    with pytest.raises(ValueError, match="not a label"):
        plot_token_weights(tokens, ratios, zoom="other")


def test_plot_token_and_sequence_loss_draws_each_column_in_its_panel_smoothed_where_the_window_fits():
    # 5 updates, window 3 (h = 1): the smoothed line covers updates 2-4, each the mean of 3 worked by hand
    naive = np.array([[4.0, 1.0], [2.0, 1.0], [3.0, 4.0], [1.0, 1.0], [2.0, 7.0]])
    fig = plot_token_and_sequence_loss({"naive": naive, "fix": naive / 2}, window=3, title="t")
    token, sequence = fig.axes
    assert not plt.fignum_exists(fig.number)
    smooth = {ax: {line.get_label(): line for line in ax.lines if not line.get_label().startswith("_")}
              for ax in (token, sequence)}
    assert np.allclose(smooth[token]["naive"].get_xdata(), [2, 3, 4])
    assert np.allclose(smooth[token]["naive"].get_ydata(), [3.0, 2.0, 2.0])  # (4+2+3)/3, (2+3+1)/3, (3+1+2)/3
    assert np.allclose(smooth[sequence]["naive"].get_ydata(), [2.0, 2.0, 4.0])  # (1+1+4)/3, (1+4+1)/3, (4+1+7)/3
    assert np.allclose(smooth[sequence]["fix"].get_ydata(), [1.0, 1.0, 2.0])
    assert smooth[token]["naive"].get_linestyle() != smooth[token]["fix"].get_linestyle()  # coinciding runs stay visible
    raw = [line for line in token.lines if line.get_label().startswith("_")]
    assert len(raw) == 2 and np.allclose(raw[0].get_ydata(), naive[:, 0])  # every update, faint
    assert token.get_yscale() == sequence.get_yscale() == "log"
    assert "token" in token.get_ylabel() and "sequence" in sequence.get_ylabel()
    fig.canvas.draw()
    lo, hi = token.get_ylim()
    assert [t.get_text() for t in token.get_yticklabels() if lo <= t.get_position()[1] <= hi][:4] == ["0.5", "0.7", "1", "2"]
    with pytest.raises(ValueError, match=r"shape \(updates, 2\)"):
        plot_token_and_sequence_loss({"one column": np.ones(5)})
    with pytest.raises(ValueError, match="at least one"):
        plot_token_and_sequence_loss({})


def test_plot_batchnorm_error_draws_the_mean_per_size_on_log_axes():
    errors = {4: [1.0, 1.2], 8: [0.6, 0.7], 16: [0.3, 0.4]}
    fig = plot_batchnorm_error(errors, batch=32)
    assert not plt.fignum_exists(fig.number)
    ax, = fig.axes
    mean = [line for line in ax.lines if line.get_label() == "mean over seeds"][0]
    assert np.allclose(mean.get_xdata(), [4, 8, 16]) and np.allclose(mean.get_ydata(), [1.1, 0.65, 0.35])
    assert ax.get_yscale() == "log" and "32" in ax.get_title()
    seeds = [line for line in ax.lines if line.get_linestyle() == "None"]  # the dots, no line
    assert [line.get_label() for line in seeds][0] == "one seed" and len(seeds) == 3
    assert [t.get_text() for t in ax.get_legend().get_texts()].count("one seed") == 1
    # no power-law guide; n = B is marked as the exact end (error 0), not extrapolated to
    assert not [line for line in ax.lines if line.get_linestyle() == ":"]
    exact, = [line for line in ax.lines if line.get_linestyle() == "--"]
    assert np.allclose(exact.get_xdata(), [32, 32]) and "exact" in exact.get_label()


def test_plot_dropout_gap_draws_the_gap_beside_the_noise_only_yardstick():
    ax, = plot_dropout_gap({1: 0.9, 4: 0.5, 16: 0.25}, {1: 1.0, 4: 0.55, 16: 0.3}).axes
    gap, = [line for line in ax.lines if line.get_label().startswith("accumulate")]
    noise, = [line for line in ax.lines if line.get_label().endswith("noise only")]
    assert np.allclose(gap.get_ydata(), [0.9, 0.5, 0.25]) and np.allclose(noise.get_ydata(), [1.0, 0.55, 0.3])
    assert len(ax.lines) == 2  # no 1/sqrt(S) guide: a relative gap's denominator shrinks with S too
    ax.figure.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels() if ax.get_ylim()[0] <= t.get_position()[1] <= ax.get_ylim()[1]]
    assert labels == ["0.1", "0.2", "0.5", "1"]  # 1, 2, 5 x 10^k from the decade below the lowest point (0.25)
    with pytest.raises(ValueError, match="same S"):
        plot_dropout_gap({1: 0.9}, {2: 1.0})


def test_plot_dropout_gap_with_ratio_draws_gap_over_yardstick_beside_a_guide_at_1():
    gaps, yardstick = {1: 0.9, 4: 0.5, 16: 0.25}, {1: 1.0, 4: 0.4, 16: 0.3}
    left, right = plot_dropout_gap(gaps, yardstick, ratio=True).axes
    assert len(left.lines) == 2  # the first panel as without ratio
    ratios, = [line for line in right.lines if line.get_label() == "gap / yardstick"]
    assert np.allclose(ratios.get_xdata(), [1, 4, 16]) and np.allclose(ratios.get_ydata(), [0.9, 1.25, 0.25 / 0.3])
    guide, = [line for line in right.lines if line.get_linestyle() == "--"]
    assert np.allclose(guide.get_ydata(), [1, 1]) and right.get_ylim() == (0.0, 2.0)


def test_plot_ema_coefficients_draws_one_bar_per_update_and_label():
    c = {"once per update": [0.25, 0.25, 0.5], "per micro-batch": [0.125, 0.375, 0.5]}
    ax, = plot_ema_coefficients(c).axes
    heights = sorted(round(p.get_height(), 3) for p in ax.patches)
    assert heights == sorted([0.25, 0.25, 0.5, 0.125, 0.375, 0.5])
    # k indexes updates (theta_k), as in the course's notation; j is an example's index
    assert ax.get_xlabel() == "the weights after update k"
    assert [t.get_text() for t in ax.get_xticklabels()] == [r"$\theta_1$", r"$\theta_2$", r"$\theta_3$"]
    with pytest.raises(ValueError, match="same length"):
        plot_ema_coefficients({"a": [1.0], "b": [0.5, 0.5]})
    with pytest.raises(ValueError, match="at least one"):
        plot_ema_coefficients({})


def test_plot_update_timeline_colours_each_micro_batch_by_its_update():
    names = ["a", "b", "c", "d"]
    fig = plot_update_timeline(names, 2, {"whole": [None, None, 1, 1], "per micro-batch": [1, None, 1, "held"]})
    ax, = fig.axes
    assert len(ax.patches) == 8
    top, bottom = ax.patches[:4], ax.patches[4:]  # the first row is drawn first, on top
    assert all(p.get_y() > q.get_y() for p, q in zip(top, bottom))
    assert top[2].get_facecolor() == top[3].get_facecolor() == bottom[0].get_facecolor() == bottom[2].get_facecolor()
    assert [bool(p.get_hatch()) for p in top + bottom] == [True, True, False, False, False, True, False, False]
    assert bottom[3].get_linestyle() == "--" and bottom[3].get_facecolor()[:3] == (1.0, 1.0, 1.0)
    texts = [t.get_text() for t in ax.texts]
    assert texts[:2] == ["a\nskipped", "b\nskipped"] and texts[7] == "d\nheld" and texts[4] == "a\nupdate 1"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["step 1", "step 2"]
    with pytest.raises(ValueError, match="one entry per micro-batch"):
        plot_update_timeline(names, 2, {"short": [1, 1]})


def test_plot_float16_range_counts_each_power_of_two_as_numpy_does_and_draws_float16s_limits():
    # by hand: log2 of 2^-30, 0.75 * 2^-20 (= -20.415), 2^-20, 3.0 (= 1.585), 2^17 -> bins -30, -21, -20, 1, 17
    small = np.array([2.0 ** -30, 0.75 * 2.0 ** -20, 2.0 ** -20, 3.0, 2.0 ** 17])
    fig = plot_float16_range({"λ = 1": small, "λ = 2^15": small * 2.0 ** 15})
    ax, = fig.axes
    assert not plt.fignum_exists(fig.number)
    counts, edges = fig.counts["λ = 1"]
    assert edges[0] == -30 and edges[-1] == 33 and np.all(np.diff(edges) == 1)  # 2^17 * 2^15 = 2^32: its bin ends at 33
    want, _ = np.histogram(np.log2(small), bins=edges)
    np.testing.assert_array_equal(counts, want)
    by_hand = {-30: 1, -21: 1, -20: 1, 1: 1, 17: 1}
    assert {int(e): int(c) for e, c in zip(edges, counts) if c} == by_hand
    shifted, _ = fig.counts["λ = 2^15"]
    assert {int(e): int(c) for e, c in zip(edges, shifted) if c} == {k + 15: 1 for k in by_hand}  # λ shifts by 15
    steps = [p for p in ax.patches]
    assert len(steps) == 2 and np.array_equal(steps[0].get_data().values, counts)
    lines = {line.get_label(): line.get_xdata()[0] for line in ax.lines}
    assert lines["float16 smallest subnormal, 6.0e-08"] == -24 and lines["float16 smallest normal, 6.1e-05"] == -14
    assert np.isclose(lines["float16 largest, 65504"], 16 + np.log2(1 - 32 / 65536), atol=1e-9)  # 65504 = 2^16 - 32
    assert "log2" in ax.get_xlabel()
    with pytest.raises(ValueError, match="positive"):
        plot_float16_range({"zero": [0.0, 1.0]})


def test_plot_clip_sweep_draws_the_miss_in_percent_against_c_with_the_norms_marked():
    # worked by hand: two micro-batch gradients (3, 0) and (0, 4), weights 1/2 each; window sum (1.5, 2), norm 2.5.
    # c = 1: each clips to (1, 0) and (0, 1), u_each = (0.5, 0.5); u_once = (0.6, 0.8); miss = |(-0.1, -0.3)| / 1
    #        = sqrt(0.1) = 0.31623 -> 31.623%
    # c = 5: nothing clipped, u_each = u_once -> 0%
    g = [np.array([3.0, 0.0]), np.array([0.0, 4.0])]
    def clip(v, c):
        return v * min(1.0, c / np.linalg.norm(v))
    misses = {}
    for c in (5.0, 1.0):  # given out of order: drawn sorted
        each, once = sum(clip(v, c) / 2 for v in g), clip(sum(v / 2 for v in g), c)
        misses[c] = np.linalg.norm(each - once) / np.linalg.norm(once)
    fig = plot_clip_sweep(misses, [3.0, 4.0], 2.5)
    ax, = fig.axes
    assert not plt.fignum_exists(fig.number)
    line, = [ln for ln in ax.lines if ln.get_label() == "clip each vs clip once"]
    assert np.allclose(line.get_xdata(), [1.0, 5.0]) and np.allclose(line.get_ydata(), [100 * np.sqrt(0.1), 0.0])
    norms = sorted(ln.get_xdata()[0] for ln in ax.lines if ln.get_linestyle() == ":")
    window, = [ln.get_xdata()[0] for ln in ax.lines if ln.get_linestyle() == "--"]
    assert norms == [3.0, 4.0] and window == 2.5
    assert ax.get_xscale() == "log" and ax.get_ylim()[0] == 0 and "%" in ax.get_ylabel()
    with pytest.raises(ValueError, match="positive"):
        plot_clip_sweep({0.0: 0.1}, [1.0], 1.0)
    with pytest.raises(ValueError, match="at least one"):
        plot_clip_sweep({}, [1.0], 1.0)


def test_plot_clip_curves_draws_each_run_from_update_1_solid_for_each_dashed_for_once():
    curves = {(1, "each"): [2.0, 1.0, 0.5], (4, "each"): [2.0, 1.5, 1.25], (4, "once"): [2.0, 1.0, 0.5]}
    fig = plot_clip_curves(curves)
    ax, = fig.axes
    drawn = {ln.get_label(): ln for ln in ax.lines}
    assert set(drawn) == {"N = 1, clip each", "N = 4, clip each", "N = 4, clip once"}
    assert np.allclose(drawn["N = 4, clip each"].get_xdata(), [1, 2, 3])
    assert np.allclose(drawn["N = 4, clip each"].get_ydata(), [2.0, 1.5, 1.25])
    assert drawn["N = 4, clip once"].get_linestyle() == "--" and drawn["N = 4, clip each"].get_linestyle() == "-"
    colour = {label: tuple(np.ravel(ln.get_color())) for label, ln in drawn.items()}
    assert colour["N = 4, clip once"] == colour["N = 4, clip each"] != colour["N = 1, clip each"]  # one colour per N
    with pytest.raises(ValueError, match="'each' or 'once'"):
        plot_clip_curves({(4, "twice"): [1.0]})
