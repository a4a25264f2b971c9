import matplotlib.figure
import matplotlib.pyplot as plt
import numpy as np
import pytest

from gradlab.studies.figures.noise_scale import plot_batch_tradeoff


def test_plot_batch_tradeoff_draws_both_factors_on_log_axes_with_a_line_at_each_noise_scale():
    fig = plot_batch_tradeoff({"early": 71.0, "late": 851.0}, micro_batch=32, ks=(1, 4, 16))
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax_s, ax_e = fig.axes
    assert ax_s.get_xscale() == ax_s.get_yscale() == ax_e.get_xscale() == ax_e.get_yscale() == "log"
    # per noise scale: curve, markers, vertical line
    curve, markers, vline = ax_s.lines[3:6]
    assert list(markers.get_xdata()) == [32.0, 128.0, 512.0]
    assert np.allclose(markers.get_ydata(), [1 + 851 / 32, 1 + 851 / 128, 1 + 851 / 512])
    assert list(vline.get_xdata()) == [851.0, 851.0]
    _, e_markers, _ = ax_e.lines[0:3]
    assert np.allclose(e_markers.get_ydata(), [1 + 32 / 71, 1 + 128 / 71, 1 + 512 / 71])
    x = curve.get_xdata()
    assert x.min() <= 16 and x.max() >= 1702  # the curve spans every marker and B_noise
    for ax in (ax_s, ax_e):
        assert [t.get_text() for t in ax.get_legend().get_texts()] == [
            "early: 71", "late: 851", "dotted: B = the noise scale"]


@pytest.mark.parametrize("kwargs, match", [
    (dict(noise_scales={}), "at least one"),
    (dict(noise_scales={"a": -1.0}), "'a'.*-1.0"),
    (dict(noise_scales={"a": float("nan")}), "'a'"),
    (dict(noise_scales={"a": 10.0}, micro_batch=0), "micro_batch.*0"),
    (dict(noise_scales={"a": 10.0}, ks=(1, 2.5)), "ks.*2.5"),
    (dict(noise_scales={"a": 10.0}, ks=()), "ks"),
])
def test_plot_batch_tradeoff_refuses_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        plot_batch_tradeoff(**kwargs)


def test_plot_batch_tradeoff_draws_measured_trainings_as_crosses_on_both_panels():
    fig = plot_batch_tradeoff({"fit": 27.0}, micro_batch=32, ks=(1, 4), measured={32: (1.8, 2.2), 512: (1.1, 20.0)})
    ax_s, ax_e = fig.axes
    s_pts, e_pts = ax_s.lines[-1], ax_e.lines[-1]
    assert list(s_pts.get_xdata()) == [32.0, 512.0] and list(s_pts.get_ydata()) == [1.8, 1.1]
    assert list(e_pts.get_ydata()) == [2.2, 20.0]
    assert "trainings (measured)" in [t.get_text() for t in ax_s.get_legend().get_texts()]
    with pytest.raises(ValueError, match="measured"):
        plot_batch_tradeoff({"fit": 27.0}, measured={32: (1.8,)})


def test_plot_updates_anchored_pins_every_curve_at_the_mean_measured_updates_of_the_anchor():
    from gradlab.studies.figures.noise_scale import plot_updates_anchored

    fig = plot_updates_anchored({"a": 30.0, "b": 120.0}, {32: [37, 34], 128: [23, 25], 512: [22]}, anchor=128)
    assert not plt.fignum_exists(fig.number)
    (ax,) = fig.axes
    assert ax.get_xscale() == ax.get_yscale() == "log"
    curve_a, curve_b, crosses = ax.lines
    for curve, b_noise in ((curve_a, 30.0), (curve_b, 120.0)):
        x, y = curve.get_xdata(), curve.get_ydata()
        # the hand-written model, pinned at the mean of 23 and 25
        assert np.allclose(y, 24.0 * (1 + b_noise / x) / (1 + b_noise / 128))
        assert x.min() < 32 and x.max() > 512
    assert list(crosses.get_xdata()) == [32, 32, 128, 128, 512]
    assert list(crosses.get_ydata()) == [37.0, 34.0, 23.0, 25.0, 22.0]


@pytest.mark.parametrize("updates, anchor, match", [
    ({32: [37], 128: [23]}, 64, "anchor"),
    ({32: [37], 128: []}, 128, "updates"),
    ({32: [0], 128: [23]}, 128, "updates"),
])
def test_plot_updates_anchored_refuses_bad_input(updates, anchor, match):
    from gradlab.studies.figures.noise_scale import plot_updates_anchored

    with pytest.raises(ValueError, match=match):
        plot_updates_anchored({"a": 30.0}, updates, anchor=anchor)
