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


def test_peak_and_measured_parts_go_to_separate_panels():
    from gradlab.studies.figures.host_cost import plot_peak_and_measured

    rows = {"small": {"compute": 0.5, "copies": 20.0, "numpy": 300.0},
            "large": {"compute": 40.0, "copies": 25.0, "numpy": 350.0}}
    fig = plot_peak_and_measured(rows, measured=["numpy"], titles=("peaks", "here"))
    left, right = fig.axes[:2]
    assert (left.get_xscale(), right.get_xscale()) == ("log", "linear")
    assert (left.get_title(), right.get_title()) == ("peaks", "here")
    # left: compute, then copies, each over the cases bottom-up ("large", then "small")
    assert [b.get_width() for b in left.patches] == [40.0, 0.5, 25.0, 20.0]
    assert [b.get_width() for b in right.patches] == [350.0, 300.0]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["compute", "copies", "numpy"]


def test_peak_and_measured_needs_both_kinds_and_positive_peaks():
    from gradlab.studies.figures.host_cost import plot_peak_and_measured

    rows = {"a": {"compute": 1.0, "numpy": 2.0}}
    for measured in ([], ["compute", "numpy"], ["gpu"]):
        with pytest.raises(ValueError, match="some, not all"):
            plot_peak_and_measured(rows, measured)
    with pytest.raises(ValueError, match="> 0"):
        plot_peak_and_measured({"a": {"compute": 0.0, "numpy": 2.0}}, ["numpy"])
    with pytest.raises(ValueError, match="at least one"):
        plot_peak_and_measured({}, ["numpy"])


def test_streams_share_one_log_axis_with_a_pace_line_per_case():
    from gradlab.studies.figures.host_cost import plot_streams_with_pace

    rows = {"small": {"compute": 0.5, "copies": 20.0, "numpy": 300.0},
            "large": {"compute": 40.0, "copies": 25.0, "numpy": 350.0}}
    fig = plot_streams_with_pace(rows, measured=["numpy"], pace="copies", title="t")
    (ax,) = fig.axes
    assert ax.get_xscale() == "log" and ax.get_title() == "t"
    assert ax.get_xlim() == pytest.approx((0.5 / 3, 350.0 * 4))  # no empty decade past 1,400 ms
    # part by part, each over the cases bottom-up ("large", then "small")
    assert [b.get_width() for b in ax.patches] == [40.0, 0.5, 25.0, 20.0, 350.0, 300.0]
    assert [bool(b.get_hatch()) for b in ax.patches] == [False] * 4 + [True] * 2
    (lines,) = ax.collections  # the pace marks: x = each case's copies, bottom-up
    assert [seg[0][0] for seg in lines.get_segments()] == [25.0, 20.0]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "compute", "copies", "numpy (measured here)", "bus pace"]
    assert [t.get_text() for t in ax.texts] == [" 40.00 ms", " 0.50 ms", " 25.00 ms", " 20.00 ms",
                                                " 350 ms", " 300 ms"]


def test_streams_with_pace_refuses_unknown_names_and_zero_times():
    from gradlab.studies.figures.host_cost import plot_streams_with_pace

    rows = {"a": {"compute": 1.0, "numpy": 2.0}}
    with pytest.raises(ValueError, match="must name parts"):
        plot_streams_with_pace(rows, ["gpu"], pace="compute")
    with pytest.raises(ValueError, match="must name parts"):
        plot_streams_with_pace(rows, ["numpy"], pace="bus")
    with pytest.raises(ValueError, match="> 0"):
        plot_streams_with_pace({"a": {"compute": 0.0, "numpy": 2.0}}, ["numpy"], pace="compute")
