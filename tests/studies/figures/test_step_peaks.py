"""The step-peak figure draws each peak in gradients, against k, beside the lines k and 2."""
import pytest

from gradlab.studies.figures.step_peaks import plot_step_peaks


def test_peaks_are_drawn_in_gradients_beside_k_and_2():
    # a gradient of 0.1 MiB: 0.5 MiB is 5 gradients, 1.7 MiB is 17
    fig = plot_step_peaks({"unrolled": {4: 0.5, 16: 1.7, 1: 0.2}, "while loop": {1: 0.2, 4: 0.2, 16: 0.2}}, 0.1)
    (ax,) = fig.axes
    lines = {line.get_label(): (list(line.get_xdata()), [round(v, 9) for v in line.get_ydata()])
             for line in ax.get_lines()}
    assert lines["unrolled"] == ([1, 4, 16], [2.0, 5.0, 17.0])
    assert lines["while loop"] == ([1, 4, 16], [2.0, 2.0, 2.0])
    assert lines["N: every micro-batch's gradient at once"] == ([1, 4, 16], [1, 4, 16])
    assert lines["2: one gradient and the sum"] == ([4, 16], [2, 2])  # no sum at N = 1: one pass
    assert ax.get_xscale() == "log" and ax.get_ylim()[0] == 0
    z = {line.get_label(): line.get_zorder() for line in ax.get_lines()}  # the references drawn on top
    assert min(z["N: every micro-batch's gradient at once"], z["2: one gradient and the sum"]) > max(
        z["unrolled"], z["while loop"])
    assert "log scale" in ax.get_xlabel()  # the evenly spaced 1, 2, 4, ... are a log axis
    assert "0.100 MiB" in ax.get_ylabel()


@pytest.mark.parametrize("peaks, gradient", [({}, 0.1), ({"a": {}}, 0.1), ({"a": {0: 1.0}}, 0.1),
                                             ({"a": {1: 1.0}}, 0.0), ({"a": {1: 1.0}}, float("nan"))])
def test_bad_arguments_are_refused(peaks, gradient):
    with pytest.raises(ValueError):
        plot_step_peaks(peaks, gradient)
