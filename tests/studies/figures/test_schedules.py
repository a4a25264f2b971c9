"""The schedule figure: one panel, labelled, the applied markers where Keras reads the rate."""
import numpy as np
import pytest

from gradlab.studies.figures.schedules import plot_schedule


def test_plot_schedule_marks_each_updates_nth_micro_step():
    fig = plot_schedule({"halving per micro-step": lambda s: 0.1 * 0.5 ** s}, [0.1, 0.05, 0.025], 4)
    (ax,) = fig.axes
    assert ax.get_xlabel().startswith("micro-step") and ax.get_ylabel() == "learning rate read"
    assert ax.get_title().endswith("gradient_accumulation_steps=4")
    marker = [line for line in ax.get_lines() if line.get_label() == "halving per micro-step"][0]
    np.testing.assert_array_equal(marker.get_xdata(), [3, 7, 11])
    np.testing.assert_allclose(marker.get_ydata(), [0.1 * 0.5 ** 3, 0.1 * 0.5 ** 7, 0.1 * 0.5 ** 11])


def test_plot_schedule_refuses_bad_input():
    with pytest.raises(ValueError, match="accum_steps"):
        plot_schedule({}, [0.1], 0, updates=1)
    with pytest.raises(ValueError, match="one rate per update"):
        plot_schedule({}, [0.1], 4)
