import matplotlib.figure
import matplotlib.pyplot as plt
import numpy as np
import pytest



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


def test_plot_updates_examples_draws_each_seeds_model_and_hyperbola_through_its_measured_anchor():
    from gradlab.studies.figures.noise_scale import plot_updates_examples

    updates = {2: {32: 37, 128: 23, 512: 22}, 3: {32: 34, 128: 24, 512: 19}}
    fig = plot_updates_examples(updates, {2: 33.0, 3: 21.0}, anchor=128, held_out=512,
                                noise_scales={"start": 71.0, "target": 122.0})
    assert not plt.fignum_exists(fig.number)
    left, right = fig.axes
    assert left.get_xscale() == right.get_yscale() == "log"
    for i, (seed, bc) in enumerate(((2, 33.0), (3, 21.0))):
        s_min = updates[seed][128] / (1 + bc / 128)  # by hand: the line through S(128)
        curve, crosses, pred_start, pred_target = left.lines[4 * i:4 * i + 4]
        assert np.allclose(curve.get_ydata(), s_min * (1 + bc / curve.get_xdata()))
        assert list(crosses.get_ydata()) == [updates[seed][b] for b in (32, 128, 512)]
        shift = crosses.get_xdata()[0] / 32  # the seed's sideways shift, the same at every B
        assert np.allclose(crosses.get_xdata(), [32 * shift, 128 * shift, 512 * shift])
        for line, b_noise in ((pred_start, 71.0), (pred_target, 122.0)):
            assert np.allclose(line.get_ydata(), updates[seed][128] * (1 + b_noise / 512) / (1 + b_noise / 128))
        hyperbola, crosses_e, knee = right.lines[3 * i:3 * i + 3]
        e, s = hyperbola.get_xdata(), hyperbola.get_ydata()
        assert np.allclose((s / s_min - 1) * (e / (s_min * bc) - 1), 1.0)
        assert np.allclose(crosses_e.get_xdata(), [b * updates[seed][b] * shift for b in (32, 128, 512)])
        assert np.allclose([knee.get_xdata()[0], knee.get_ydata()[0]], [2 * s_min * bc, 2 * s_min])
    # tied counts stay apart: the two seeds' crosses sit at different x
    assert left.lines[1].get_xdata()[0] != left.lines[5].get_xdata()[0]


@pytest.mark.parametrize("updates, b_crit, match", [
    ({2: {32: 37, 128: 23}}, {2: 30.0}, "held_out"),
    ({2: {32: 37, 128: 23, 512: 22}}, {3: 30.0}, "same seeds"),
    ({2: {32: 37, 128: 23, 512: 0}}, {2: 30.0}, "finite"),
    ({2: {32: 37, 128: 23, 512: 22}}, {2: -1.0}, "b_crit"),
])
def test_plot_updates_examples_refuses_bad_input(updates, b_crit, match):
    from gradlab.studies.figures.noise_scale import plot_updates_examples

    with pytest.raises(ValueError, match=match):
        plot_updates_examples(updates, b_crit, anchor=128, held_out=512, noise_scales={"a": 71.0})
