"""The stacked cost bars: their totals and bar lengths worked out by hand."""
import pytest

from gradlab.studies.figures.host_cost import plot_update_costs


def test_each_bar_is_its_parts_laid_end_to_end():
    rows = {"small": {"compute": 1.0, "copies": 2.5, "numpy": 0.5},
            "large": {"compute": 4.0, "copies": 0.0, "numpy": 6.0}}
    fig, totals = plot_update_costs(rows)
    assert totals == {"small": 4.0, "large": 10.0}
    bars = fig.axes[0].patches  # part by part, cases bottom-up ("large", then "small")
    assert [(b.get_x(), b.get_width()) for b in bars] == [
        (0.0, 4.0), (0.0, 1.0),  # compute
        (4.0, 0.0), (1.0, 2.5),  # copies start where compute ends
        (4.0, 6.0), (3.5, 0.5)]  # numpy after the copies
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["compute", "copies", "numpy"]


def test_cases_must_name_the_same_parts_and_real_times():
    with pytest.raises(ValueError, match="same|parts"):
        plot_update_costs({"a": {"x": 1.0}, "b": {"y": 1.0}})
    with pytest.raises(ValueError, match="finite"):
        plot_update_costs({"a": {"x": -1.0}})
    with pytest.raises(ValueError, match="at least one"):
        plot_update_costs({})
