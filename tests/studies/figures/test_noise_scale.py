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
