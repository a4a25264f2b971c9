import matplotlib.figure
import matplotlib.pyplot as plt
import numpy as np
import pytest


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
