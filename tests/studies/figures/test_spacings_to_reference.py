import matplotlib.colors
import matplotlib.figure
import matplotlib.pyplot as plt
import pytest

from gradlab.studies.figures.spacings_to_reference import plot_spacings_to_reference


def test_plot_spacings_to_reference_draws_each_gap_on_a_log_axis_with_the_rounding_band():

    fig = plot_spacings_to_reference({"plain": 0.0, "yours": 1.0, "miscount": 52_000.0}, reference="the large batch")
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    assert ax.get_xscale() == "log" and "the large batch" in ax.get_xlabel()
    bars = ax.containers[0]
    ends = [bar.get_x() + bar.get_width() for bar in bars]
    assert ends == pytest.approx([0.1, 1.0, 52_000.0])  # each bar ends at its gap, 0 at the floor, 0.1
    assert [bar.get_y() + bar.get_height() / 2 for bar in bars] == pytest.approx([2, 1, 0])  # the first on top
    assert {t.get_position()[1]: t.get_text() for t in ax.get_yticklabels()} == {2: "plain", 1: "yours", 0: "miscount"}
    red = matplotlib.colors.to_rgba("tab:red")
    assert [bar.get_facecolor() == red for bar in bars] == [False, False, True]  # past the band: red
    assert bars[0].get_hatch() == "///" and bars[0].get_facecolor()[3] == 0  # 0: a hatched, unfilled stub
    assert bars[1].get_hatch() is None and bars[1].get_facecolor()[3] == 1
    band, = ax.patches[:1]
    assert band.get_x() == pytest.approx(0.01) and band.get_x() + band.get_width() == pytest.approx(10)
    assert [t.get_text() for t in ax.texts] == ["0 (bit for bit), drawn at 0.1", "1.0", "52,000"]
    for bad in ({}, {"x": -1.0}, {"x": float("nan")}, {"x": True}):
        with pytest.raises(ValueError):
            plot_spacings_to_reference(bad)
