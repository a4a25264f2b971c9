import matplotlib.figure
import matplotlib.pyplot as plt
import pytest

from gradlab.studies.figures.loop_peaks import plot_loop_peaks


def test_plot_loop_peaks_draws_one_line_per_loop_and_reads_the_right_axis_in_gradients():
    peaks = {"one at a time": {8: 1.5, 2: 1.5, 4: 1.5}, "unrolled": {2: 1.5, 4: 3.0, 8: 6.0}}
    fig = plot_loop_peaks(peaks, gradient_mib=0.75, title="t")
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    one, unrolled = ax.lines
    assert list(one.get_xdata()) == [2, 4, 8] and list(one.get_ydata()) == [1.5, 1.5, 1.5]  # sorted by N
    assert list(unrolled.get_ydata()) == [1.5, 3.0, 6.0] and ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["one at a time", "unrolled"]
    right, = ax.child_axes
    # by hand: 6.0 MiB at 0.75 MiB a gradient reads 8 gradients, and 8 gradients 6.0 MiB back
    forward, inverse = right._functions
    assert forward(6.0) == pytest.approx(8.0) and inverse(8.0) == pytest.approx(6.0)
    assert right.get_ylabel() == "gradients" and ax.get_title() == "t" and ax.get_ylim()[0] == 0
    assert not plot_loop_peaks({"a": {1: 1.0}}).axes[0].child_axes  # no gradient size: no right axis
    for bad in (({},), ({"a": {}},), ({"a": {0: 1.0}},), ({"a": {2: float("nan")}},), ({"a": {2: 1.0}}, 0.0)):
        with pytest.raises(ValueError):
            plot_loop_peaks(*bad)
