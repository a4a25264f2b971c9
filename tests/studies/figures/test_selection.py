import matplotlib.figure
import matplotlib.pyplot as plt
import numpy as np
import pytest


def test_plot_checkpoint_curve_marks_the_best_of_all_and_of_the_sparse_schedule():
    from gradlab.studies.figures.selection import plot_checkpoint_curve
    updates = [50, 100, 150, 200, 200]
    curve = [0.90, 0.91, 0.95, 0.92, 0.92]  # the best (95%) falls between the sparse points
    fig = plot_checkpoint_curve(updates, curve, every=100)
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    (ax,) = fig.axes
    line, sparse, _, best_all, _, best_sparse = ax.lines
    assert list(sparse.get_xdata()) == [100, 200, 200]
    assert (best_all.get_xdata()[0], best_all.get_ydata()[0]) == (150, pytest.approx(95.0))
    assert (best_sparse.get_xdata()[0], best_sparse.get_ydata()[0]) == (200, pytest.approx(92.0))
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[1] == "the 3 at every 100 updates"  # nothing cropped: no note
    assert labels[2:] == ["best of all 5: 95.0% at update 150", "best of the 3: 92.0% at update 200"]


def test_plot_checkpoint_curve_crops_the_updates_below_its_accuracy_axis():
    from gradlab.studies.figures.selection import plot_checkpoint_curve
    updates = [100, 200, 300, 400, 400]
    curve = [0.50, 0.60, 0.95, 0.96, 0.96]  # the axis shows 92% to 96.5%: updates 100, 200 fall below
    (ax,) = plot_checkpoint_curve(updates, curve, every=100).axes
    assert ax.get_ylim() == (pytest.approx(92.0), pytest.approx(96.5))
    assert 200 < ax.get_xlim()[0] < 300 and ax.get_xlim()[1] > 400
    # the legend says where the cropped axis starts showing the sparse checkpoints: from 300 (100, 200 fall below)
    assert ax.get_legend().get_texts()[1].get_text() == "the 5 at every 100 updates (shown from update 300)"
    assert ax.get_ylabel() == "test accuracy (%)"


def test_plot_checkpoint_curve_starts_its_x_axis_at_the_first_sparse_evaluation_shown_and_takes_a_title():
    from gradlab.studies.figures.selection import plot_checkpoint_curve
    updates = [50, 100, 150, 200, 250, 300, 300]
    curve = [0.50, 0.60, 0.93, 0.94, 0.96, 0.95, 0.95]  # 150 lies on the axis (92% up), the first sparse one shown: 200
    (ax,) = plot_checkpoint_curve(updates, curve, every=100, title="run 0").axes
    assert 150 < ax.get_xlim()[0] < 200 and ax.get_xlim()[0] == pytest.approx(200 - 0.02 * 100)
    assert ax.get_title() == "run 0"


@pytest.mark.parametrize("updates, curve, match", [([1, 2], [0.5], "shapes"), ([1, 2], [0.5, 0.6], "every=100")])
def test_plot_checkpoint_curve_refuses_bad_input(updates, curve, match):
    from gradlab.studies.figures.selection import plot_checkpoint_curve
    with pytest.raises(ValueError, match=match):
        plot_checkpoint_curve(updates, curve)


def test_plot_paired_gaps_draws_each_rows_mean_paired_gap_and_its_interval():
    from gradlab.studies.figures.selection import plot_paired_gaps
    # 200 updates: N=1 logs 100, 200, 200; N=2 logs 50, 100, 150, 200, 200
    one = [{"curve": [0.50, 0.80, 0.80]}, {"curve": [0.60, 0.90, 0.90]}]
    two = [{"curve": [0.10, 0.52, 0.99, 0.83, 0.83]}, {"curve": [0.20, 0.66, 0.99, 0.91, 0.91]}]
    record = {"updates": 200, "rows": [{"accum_steps": 1, "runs": one}, {"accum_steps": 2, "runs": two}]}
    fig = plot_paired_gaps(record, t=12.706)  # Student's 97.5% quantile at 1 degree of freedom
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    (ax,) = fig.axes
    (bars,) = ax.containers
    data, _, (segments,) = bars.lines
    # paired gaps, in points: update 100: 52 - 50 = +2 and 66 - 60 = +6 (mean 4, std 2.828, SE 2);
    # update 200: 83 - 80 = +3 and 91 - 90 = +1 (mean 2, std 1.414, SE 1); update 150 is not shared
    assert list(data.get_xdata()) == [100, 200] and np.allclose(data.get_ydata(), [4.0, 2.0])
    lows, highs = zip(*[(seg[0][1], seg[1][1]) for seg in segments.get_segments()])
    assert np.allclose(lows, [4.0 - 25.412, 2.0 - 12.706]) and np.allclose(highs, [4.0 + 25.412, 2.0 + 12.706])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["N=2 minus N=1"]
    assert ax.get_title() == "Paired gap to N = 1 (same seed): mean ± 12.71 × SE"
    assert ax.get_ylabel() == "test accuracy gap (points)"
    titled = plot_paired_gaps(record, t=12.706, level="95%").axes[0].get_title()
    assert titled == "Paired gap to N = 1 (same seed): mean ± 95% interval (12.71 × SE)"


def test_plot_paired_gaps_zooms_and_refuses_unpaired_rows():
    from gradlab.studies.figures.selection import plot_paired_gaps
    one = [{"curve": [0.50, 0.80, 0.80]}, {"curve": [0.60, 0.90, 0.90]}]
    two = [{"curve": [0.10, 0.52, 0.99, 0.83, 0.83]}, {"curve": [0.20, 0.66, 0.99, 0.91, 0.91]}]
    record = {"updates": 200, "rows": [{"accum_steps": 1, "runs": one}, {"accum_steps": 2, "runs": two}]}
    full, zoom = plot_paired_gaps(record, t=1.0, zoom_from=200).axes
    (bars,) = zoom.containers
    assert list(bars.lines[0].get_xdata()) == [200] and np.allclose(bars.lines[0].get_ydata(), [2.0])
    assert zoom.get_title() == "Zoom: updates 200 to 200 (colours as left)"
    with pytest.raises(ValueError, match="as many runs"):
        plot_paired_gaps({"updates": 200, "rows": [{"accum_steps": 1, "runs": one},
                                                   {"accum_steps": 2, "runs": two[:1]}]}, t=1.0)
    with pytest.raises(ValueError, match=r"\[4\]"):
        plot_paired_gaps(record, t=1.0, accum_steps=(4,))


def test_plot_best_of_more_draws_each_lines_gains_on_a_log_axis_of_the_counts():
    from gradlab.studies.figures.selection import plot_best_of_more
    counts = [11, 21, 51]
    fig = plot_best_of_more(counts, {"runs": [0.0, 0.1, 0.2], "noise": [0.0, 0.3, 0.5]})
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    assert tuple(fig.get_size_inches()) == (7.0, 3.5)
    (ax,) = fig.axes
    runs, noise = ax.lines
    assert list(runs.get_xdata()) == counts and list(runs.get_ydata()) == [0.0, 0.1, 0.2]
    assert list(noise.get_ydata()) == [0.0, 0.3, 0.5]
    assert (runs.get_marker(), runs.get_linestyle()) == ("o", "-")
    assert (noise.get_marker(), noise.get_linestyle()) == ("s", "--")
    assert ax.get_xscale() == "log" and list(ax.get_xticks()) == counts
    assert [t.get_text() for t in ax.get_xticklabels()] == ["11", "21", "51"]
    assert ax.get_ylabel() == "mean best of them - best of 11 (points)"
    assert ax.get_xlabel() == "evaluations looked at" and ax.get_title() == "The best of more evaluations is higher"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["runs", "noise"]


@pytest.mark.parametrize("counts, gains, match", [
    ([11, 11, 21], {"a": [0, 0, 0]}, r"\[11, 11, 21\]"),
    ([0, 1], {"a": [0, 0]}, r"\[0, 1\]"),
    ([], {"a": []}, r"\[\]"),
    ([11, 21], {}, "none"),
    ([11, 21], {"short": [0.0]}, "'short': 1 gains for 2 counts"),
])
def test_plot_best_of_more_refuses_bad_input(counts, gains, match):
    from gradlab.studies.figures.selection import plot_best_of_more
    with pytest.raises(ValueError, match=match):
        plot_best_of_more(counts, gains)
