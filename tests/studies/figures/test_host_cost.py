"""The streams figure: bars and pace lines worked out by hand, and what it refuses."""
import pytest


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


def test_streams_refuse_no_case_uneven_cases_and_negative_times():
    from gradlab.studies.figures.host_cost import plot_streams_with_pace
    with pytest.raises(ValueError, match="at least one"):
        plot_streams_with_pace({}, [], "copies")
    with pytest.raises(ValueError, match="same|parts"):
        plot_streams_with_pace({"a": {"copies": 1.0}, "b": {"numpy": 1.0}}, [], "copies")
    with pytest.raises(ValueError, match="finite"):
        plot_streams_with_pace({"a": {"copies": -1.0}}, [], "copies")
