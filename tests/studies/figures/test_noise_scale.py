import io

import matplotlib.pyplot as plt
import numpy as np
import pytest


def test_fit_critical_batch_is_the_least_squares_line_in_one_over_b():
    from gradlab.studies.figures.noise_scale import fit_critical_batch

    # exact points of S = 20 (1 + 30 / B) give the model back
    s_min, b_crit = fit_critical_batch({1: {b: 20 * (1 + 30 / b) for b in (16, 64, 256)}})
    assert abs(s_min - 20) < 1e-9 and abs(b_crit - 30) < 1e-9
    # noisy points: the normal equations of S = a + c x, x = 1/B, solved by hand
    updates = {2: {32: 37, 128: 23, 512: 22}, 3: {32: 34, 128: 24, 512: 19}}
    x = np.array([1 / 32, 1 / 128, 1 / 512] * 2)
    s = np.array([37, 23, 22, 34, 24, 19], dtype=float)
    c = ((x - x.mean()) * (s - s.mean())).sum() / ((x - x.mean()) ** 2).sum()
    a = s.mean() - c * x.mean()
    s_min, b_crit = fit_critical_batch(updates)
    assert abs(s_min - a) < 1e-9 and abs(b_crit - c / a) < 1e-9


def test_fit_critical_batch_refuses_one_batch_size_or_s_rising_with_b():
    from gradlab.studies.figures.noise_scale import fit_critical_batch

    with pytest.raises(ValueError, match="two or more"):
        fit_critical_batch({2: {32: 37}})
    with pytest.raises(ValueError, match="fall"):
        fit_critical_batch({2: {32: 10, 128: 20}})


def test_plot_critical_batch_draws_one_hyperbola_through_its_knee_and_every_training():
    from gradlab.studies.figures.noise_scale import plot_critical_batch

    updates = {2: {32: 37, 128: 23, 512: 22}, 3: {32: 34, 128: 24, 512: 19}}
    fig = plot_critical_batch(updates, s_min=19.0, b_crit=28.0)
    assert not plt.fignum_exists(fig.number)
    left, right = fig.axes
    curve = left.lines[0]
    assert np.allclose(curve.get_ydata(), 19.0 * (1 + 28.0 / curve.get_xdata()))
    hyperbola = right.lines[0]
    e, s = hyperbola.get_xdata(), hyperbola.get_ydata()
    assert np.allclose((s / 19.0 - 1) * (e / (19.0 * 28.0) - 1), 1.0)
    for i, seed in enumerate(updates):  # measured B and E = B S, unshifted; one marker shape per seed
        crosses, crosses_e = left.lines[1 + i], right.lines[1 + i]
        assert list(crosses.get_ydata()) == [updates[seed][b] for b in (32, 128, 512)]
        assert list(crosses.get_xdata()) == [32, 128, 512]
        assert list(crosses_e.get_xdata()) == [32 * 37, 128 * 23, 512 * 22] if seed == 2 else [32 * 34, 128 * 24, 512 * 19]
        assert crosses.get_marker() == crosses_e.get_marker() == ("o", "s")[i]
    knee = right.lines[-1]
    assert np.allclose([knee.get_xdata()[0], knee.get_ydata()[0]], [2 * 19.0 * 28.0, 2 * 19.0])
    with pytest.raises(ValueError, match="b_crit"):
        plot_critical_batch(updates, s_min=19.0, b_crit=-1.0)


def test_plot_learning_rate_sweep_draws_each_batch_size_and_rings_its_fewest_updates():
    from gradlab.studies.figures.noise_scale import plot_learning_rate_sweep

    sweep = {32: {0.2: 51, 0.4: 37, 0.8: 81, 1.6: np.inf}, 512: {0.2: 35, 0.4: 23, 0.8: 22, 1.6: 135}}
    fig = plot_learning_rate_sweep(sweep, target=0.5)
    assert not plt.fignum_exists(fig.number)
    (ax,) = fig.axes
    lines = ax.lines  # per B: the reached rates, the missed ones, the ring
    assert list(lines[0].get_xdata()) == [0.2, 0.4, 0.8] and list(lines[0].get_ydata()) == [51, 37, 81]
    assert np.isclose(lines[1].get_xdata()[0], 1.6 * 2 ** -0.03) and lines[1].get_ydata()[0] > 81
    assert (lines[2].get_xdata()[0], lines[2].get_ydata()[0]) == (0.4, 37)
    assert (lines[5].get_xdata()[0], lines[5].get_ydata()[0]) == (0.8, 22)
    assert list(lines[4].get_xdata()) == []
    assert "0.5" in ax.get_title() and list(ax.get_xticks()) == [0.2, 0.4, 0.8, 1.6]


def test_plot_learning_rate_sweep_refuses_a_batch_size_that_never_reached_the_target():
    from gradlab.studies.figures.noise_scale import plot_learning_rate_sweep

    with pytest.raises(ValueError, match="finite"):
        plot_learning_rate_sweep({32: {0.4: np.inf}})


def test_plot_learning_rate_sweep_with_a_cap_bands_the_misses_and_circles_every_tie():
    from gradlab.studies.figures.noise_scale import plot_learning_rate_sweep

    sweep = {16: {0.2: 58, 0.4: 58, 0.8: np.inf}, 32: {0.2: 51, 0.4: 37, 0.8: 81}}
    fig = plot_learning_rate_sweep(sweep, target=0.5, cap=100)
    (ax,) = fig.axes
    lines = ax.lines  # per B: the reached rates, the missed ones, the circles
    assert list(lines[2].get_xdata()) == [0.2, 0.4] and list(lines[2].get_ydata()) == [58, 58]
    assert list(lines[5].get_xdata()) == [0.4] and list(lines[5].get_ydata()) == [37]
    miss_y = lines[1].get_ydata()[0]
    assert miss_y > 100 and ax.get_ylim()[1] > miss_y and len(ax.patches) == 1  # the band
    labels = [ax.yaxis.get_major_formatter()(v, None) for v in (96, 112)]
    assert labels == ["96", ""]  # no tick label above the cap
    assert any("not within 100 updates (cap)" in t.get_text() for t in ax.texts)
    assert "circle" in ax.get_title()
    with pytest.raises(ValueError, match="cap"):
        plot_learning_rate_sweep({32: {0.4: 120}}, cap=100)


def test_plot_learning_rate_sweep_can_offset_each_batch_size_so_tied_points_both_show():
    from gradlab.studies.figures.noise_scale import plot_learning_rate_sweep

    # B = 128 and 512 both take 23 updates at lr 0.4: with offset, 2^(0.1 (i - 1/2)) for i = 0, 1
    sweep = {128: {0.4: 23, 0.8: 24, 1.6: np.inf}, 512: {0.4: 23, 0.8: 22, 1.6: np.inf}}
    fig = plot_learning_rate_sweep(sweep, target=0.5, cap=100, offset=True)
    (ax,) = fig.axes
    lines = ax.lines  # per B: the reached rates, the missed ones, the circles
    assert np.allclose(lines[0].get_xdata(), [0.4 * 2 ** -0.05, 0.8 * 2 ** -0.05])
    assert np.allclose(lines[3].get_xdata(), [0.4 * 2 ** 0.05, 0.8 * 2 ** 0.05])
    assert list(lines[0].get_ydata()) == [23, 24] and list(lines[3].get_ydata()) == [23, 22]
    assert np.allclose(lines[1].get_xdata(), [1.6 * 2 ** -0.05]) and np.allclose(lines[4].get_xdata(), [1.6 * 2 ** 0.05])
    assert np.allclose(lines[2].get_xdata(), [0.4 * 2 ** -0.05]) and np.allclose(lines[5].get_xdata(), [0.8 * 2 ** 0.05])
    assert list(ax.get_xticks()) == [0.4, 0.8, 1.6]  # the ticks stay at the rates swept


def test_plot_critical_batch_can_move_the_label_at_the_knee_clear_of_its_circle():
    from gradlab.studies.figures.noise_scale import plot_critical_batch

    updates = {2: {16: 58, 32: 37, 128: 23, 512: 22}}
    for clear, expected in ((False, (-10, -16)), (True, (12, 12))):
        right = plot_critical_batch(updates, s_min=18.5, b_crit=32.4, clear_knee=clear).axes[1]
        offsets = {t.get_text(): t.xyann for t in right.texts}
        assert offsets["B = 32"] == expected  # E = 1,184, S = 37: at the knee (1,199, 37)
        assert offsets["B = 128"] == (-10, -16)  # far from it: below its cross either way


def test_plot_progress_draws_both_curves_crossing_at_one_half_at_the_noise_scale():
    from gradlab.studies.figures.noise_scale import plot_progress

    fig = plot_progress(71.0, marks=(32, 256))
    ax = fig.axes[0]
    update, example = ax.lines[0], ax.lines[1]
    b = update.get_xdata()
    # by hand: at B = B_noise both are 1/2; at B = 32, 32 / 103 per update and 71 / 103 per example
    assert np.allclose(update.get_ydata(), b / (b + 71.0))
    assert np.allclose(example.get_ydata(), 71.0 / (b + 71.0))
    points = {(round(float(l.get_xdata()[0])), round(float(l.get_ydata()[0]), 4)) for l in ax.lines[3:]}
    assert points == {(32, round(32 / 103, 4)), (32, round(71 / 103, 4)), (256, round(256 / 327, 4)),
                      (256, round(71 / 327, 4))}
    assert ax.lines[2].get_xdata()[0] == 71.0
    # labels left of the dashed line at 71 point left (off the line); right of it, right
    where = {t.get_text(): (t.xyann, t.get_ha()) for t in ax.texts}
    assert where["0.31 at B = 32"] == ((-6, 4), "right")  # 32 / 103
    assert where["0.69 at B = 32"] == ((-6, -12), "right")  # 71 / 103
    assert where["0.78 at B = 256"] == ((6, 4), "left")  # 256 / 327
    assert where["0.22 at B = 256"] == ((6, 4), "left")  # 71 / 327


def test_plot_progress_labels_its_dashed_line_as_told_or_as_b_noise_by_default():
    from gradlab.studies.figures.noise_scale import plot_progress

    assert plot_progress(70.6).axes[0].lines[2].get_label() == "B = B_noise = 71"
    told = plot_progress(70.6, line_label="b = B_simple = 71 (taken as B_noise)").axes[0].lines[2]
    assert told.get_label() == "b = B_simple = 71 (taken as B_noise)"
    assert told.get_xdata()[0] == 70.6  # the line still stands at the noise scale given


def test_plot_progress_refuses_a_noise_scale_that_is_not_positive():
    from gradlab.studies.figures.noise_scale import plot_progress

    for bad in (0, -3.0, float("nan"), True):
        with pytest.raises(ValueError, match="noise_scale"):
            plot_progress(bad)
    with pytest.raises(ValueError, match="marks"):
        plot_progress(71.0, marks=(0,))


def test_plot_critical_batch_by_target_draws_each_targets_fit_and_b_crit_against_the_target():
    from gradlab.studies.figures.noise_scale import plot_critical_batch_by_target

    # exact points: S = 20 (1 + 30 / B) at loss 0.5 and S = 40 (1 + 60 / B) at 0.3, one seed each
    by_target = {0.5: {2: {b: 20 * (1 + 30 / b) for b in (16, 64, 256)}},
                 0.3: {2: {b: 40 * (1 + 60 / b) for b in (16, 64, 256)}}}
    fig = plot_critical_batch_by_target(by_target)
    assert not plt.fignum_exists(fig.number)
    left, right = fig.axes
    curves = [line for line in left.lines if line.get_linestyle() == "-"]
    assert np.allclose(curves[0].get_ydata(), 20 * (1 + 30 / curves[0].get_xdata()))  # loss 0.5 first
    assert np.allclose(curves[1].get_ydata(), 40 * (1 + 60 / curves[1].get_xdata()))
    pooled = right.lines[0]
    assert list(pooled.get_xdata()) == [0.5, 0.3] and np.allclose(pooled.get_ydata(), [30, 60])
    # 20 (1 + 30 / 16) = 57.5 at B = 16 is a seed-2 circle; the y axis ticks 2^n and 1.5 x 2^n
    circles = [line for line in left.lines if line.get_marker() == "o" and len(line.get_xdata())]
    assert np.allclose(circles[0].get_ydata(), [57.5, 29.375, 22.34375])
    assert [line.get_label() for line in left.lines if line.get_marker() == "o"][-1] == "seed 2"
    ticks = [v for v in left.get_yticks() if 20 <= v <= 130]
    assert np.allclose(ticks, [24, 32, 48, 64, 96, 128])
    assert right.get_xlim()[0] > right.get_xlim()[1]  # the loss falls to the right
    with pytest.raises(ValueError, match="two or more"):
        plot_critical_batch_by_target({0.5: by_target[0.5]})


def test_plot_critical_batch_by_target_gives_each_seed_its_own_marker_shape():
    from gradlab.studies.figures.noise_scale import plot_critical_batch_by_target

    by_target = {t: {seed: {16: 60 + seed, 512: 20 + seed} for seed in (2, 3, 4)} for t in (0.5, 0.3)}
    left = plot_critical_batch_by_target(by_target).axes[0]
    shapes = {seed: {line.get_marker() for line in left.lines if len(line.get_xdata())
                     and line.get_linestyle() == "None" and line.get_ydata()[1] == 20 + seed} for seed in (2, 3, 4)}
    assert shapes == {2: {"o"}, 3: {"s"}, 4: {"^"}}


def test_plot_noise_scale_tracking_draws_the_exact_points_each_average_and_its_infinite_updates():
    from gradlab.studies.figures.noise_scale import plot_noise_scale_tracking

    exact = {2: (0.5, 40.0), 4: (0.25, 100.0)}
    averages = {"slow": ([1.0, 0.8, 0.4, 0.2], [20.0, 30.0, 50.0, 120.0]),
                "fast": ([0.9, -0.1, 0.3, 0.0], [25.0, np.inf, 60.0, np.inf])}
    fig = plot_noise_scale_tracking(exact, averages)
    assert not plt.fignum_exists(fig.number)
    left, right = fig.axes
    lines = {(ax, l.get_label()): l for ax in (left, right) for l in ax.lines}
    for ax, k in ((left, 0), (right, 1)):
        black = lines[(ax, "exact, all training examples")]
        assert list(black.get_xdata()) == [2, 4] and list(black.get_ydata()) == [exact[2][k], exact[4][k]]
        assert list(lines[(ax, "slow")].get_ydata()) == averages["slow"][k]
        # the fast average's |g|^2 > 0 at updates 1 and 3 only
        assert list(lines[(ax, "fast")].get_xdata()) == [1, 3]
    # by hand: crosses at half the smallest positive |g|^2 (0.2 / 2) and twice the largest B_simple (120 x 2)
    note = "fast: |g|^2 <= 0 (2 updates)"
    assert list(lines[(left, note)].get_xdata()) == [2, 4] and list(lines[(left, note)].get_ydata()) == [0.1, 0.1]
    assert list(lines[(right, note)].get_ydata()) == [240.0, 240.0]
    assert left.get_yscale() == right.get_yscale() == "log"

def test_plot_noise_scale_tracking_starts_the_averages_at_first_and_draws_the_exact_points_unjoined():
    from gradlab.studies.figures.noise_scale import plot_noise_scale_tracking

    # averages read at the same weights as the exact values: the first at update 0
    fig = plot_noise_scale_tracking({0: (1.0, 10.0), 2: (0.5, 40.0)},
                                    {"a": ([1.0, 0.8, 0.4], [10.0, 30.0, 50.0])}, first=0)
    left, right = fig.axes
    lines = {(ax, l.get_label()): l for ax in (left, right) for l in ax.lines}
    assert list(lines[(left, "a")].get_xdata()) == [0, 1, 2]
    assert list(lines[(right, "a")].get_ydata()) == [10.0, 30.0, 50.0]
    black = lines[(left, "exact, all training examples")]
    assert black.get_linestyle() == "None" and black.get_marker() == "o"
    fig.savefig(io.BytesIO(), format="png")  # the mathtext labels parse


def test_plot_noise_scale_tracking_refuses_a_b_simple_that_is_not_inf_where_g_is_not_positive():
    from gradlab.studies.figures.noise_scale import plot_noise_scale_tracking

    with pytest.raises(ValueError, match="inf exactly"):
        plot_noise_scale_tracking({1: (1.0, 10.0)}, {"a": ([1.0, -0.5], [10.0, 30.0])})
    with pytest.raises(ValueError, match="exact"):
        plot_noise_scale_tracking({1: (0.0, 10.0)}, {})
    with pytest.raises(ValueError, match="one length"):
        plot_noise_scale_tracking({1: (1.0, 10.0)}, {"a": ([1.0], [10.0, 30.0])})




def test_plot_time_to_target_draws_the_model_time_with_its_least_at_sqrt_b_crit_tau():
    from gradlab.studies.figures.noise_scale import plot_time_to_target

    # by hand: S_min = 10, B_crit = 32, tau = 128 examples, 0.5 ms an example: B* = sqrt(32 x 128) = 64,
    # T(64) = 10 x (1 + 32/64) x (128 + 64) x 0.5 = 1440 ms; T(32) = 10 x 2 x 160 x 0.5 = 1600 ms
    fig = plot_time_to_target(10, 32, 128, 0.5, other_taus=(8,), priced={"seed 2": {32: 1700, 512: 5000}},
                              clocked={32: 1650, 128: 1500}, micro=32)
    ax = fig.axes[0]
    lines = {ln.get_gid(): ln for ln in ax.get_lines() if ln.get_gid() in ("model", "model tau=8", "clocked")}
    model = lines["model"]
    x, y = np.asarray(model.get_xdata()), np.asarray(model.get_ydata())
    assert abs(np.interp(32, x, y) - 1600) < 5 and abs(x[np.argmin(y)] / 64 - 1) < 0.02
    assert y.min() >= 1440 - 1e-9
    least = [ln for ln in ax.get_lines() if ln.get_gid() == "least"]
    assert [(float(ln.get_xdata()[0]), float(ln.get_ydata()[0])) for ln in least] == [(64.0, 1440.0), (16.0, 10 * 3 * 24 * 0.5)]
    assert list(lines["clocked"].get_xdata()) == [32, 128] and list(lines["clocked"].get_ydata()) == [1650, 1500]
    assert any(list(ln.get_xdata()) == [32, 512] and list(ln.get_ydata()) == [1700, 5000] for ln in ax.get_lines())
    assert len(ax.child_axes) == 1  # the top axis: N micro-batches
    fig.savefig(io.BytesIO(), format="png")
    with pytest.raises(ValueError, match="finite"):
        plot_time_to_target(10, 32, 0, 0.5)


def test_plot_time_to_target_tells_the_other_taus_apart_and_lists_every_least():
    from gradlab.studies.figures.noise_scale import plot_time_to_target

    # by hand: B* = sqrt(32 tau): 64 at tau 128, 32 at tau 32, 16 at tau 8
    fig = plot_time_to_target(10, 32, 128, 0.5, other_taus=(32, 8), micro=32)
    ax = fig.axes[0]
    curves = {ln.get_gid(): ln for ln in ax.get_lines() if str(ln.get_gid()).startswith("model")}
    styles = [curves[g].get_linestyle() for g in ("model", "model tau=32", "model tau=8")]
    assert len(set(styles)) == 3, styles  # solid, and two different dash patterns
    labels = ax.get_legend_handles_labels()[1]
    assert "its least, B* = 32 (tau = 32)" in labels and "its least, B* = 16 (tau = 8)" in labels, labels
    assert sum(label.startswith("least at B*") for label in labels) == 1, labels
    fig.canvas.draw()
    top = ax.child_axes[0]
    ticks = [t for t in top.get_xticks() if 16 / 32 <= t <= 512 / 32]
    assert {1, 2, 4, 8, 16} <= set(ticks), ticks  # N at every power of 2
