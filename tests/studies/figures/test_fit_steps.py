import pytest

from gradlab.studies.figures.fit_steps import fit_step_spans, plot_fit_steps


def test_fit_step_spans_places_steps_updates_the_wait_and_the_epoch_crossing_by_hand():
    # an accumulating step: batches of 6, 6, 2 per epoch of 14, one update a step, two epochs
    got = fit_step_spans([6, 6, 2] * 2, [1, 2, 3, 4, 5, 6], epoch_rows=14)
    assert got["starts"] == [0, 6, 12, 14, 20, 26] and got["ends"] == [6, 12, 14, 20, 26, 28]
    assert got["updates"] == [6, 12, 14, 20, 26, 28] and got["waiting"] == (28, 28) and got["across"] == []
    # Keras-like: micro-batches of 3, 3, 3, 3, 2 per epoch of 14, an update every 4th apply (counted across epochs)
    rows = [3, 3, 3, 3, 2] * 2
    counts = [i // 4 for i in range(1, 11)]  # applies 1..10 -> updates after applies 4 and 8
    got = fit_step_spans(rows, counts, epoch_rows=14)
    assert got["ends"] == [3, 6, 9, 12, 14, 17, 20, 23, 26, 28]
    assert got["updates"] == [12, 23]  # the 4th apply ends at 12, the 8th at 23
    assert got["across"] == [(12, 14, 23)]  # the 2 left over join epoch 2's first 9
    assert got["waiting"] == (23, 28)


def test_plot_fit_steps_draws_one_dot_per_update_and_labels_the_crossing():
    lanes = {"yours": ([6, 6, 2] * 2, [1, 2, 3, 4, 5, 6], 2),
             "keras": ([3, 3, 3, 3, 2] * 2, [i // 4 for i in range(1, 11)], 1)}
    fig = plot_fit_steps(lanes, epoch_rows=14)
    ax, = fig.axes
    dots = [line for line in ax.lines if line.get_label().startswith(("yours", "keras"))]
    assert [len(line.get_xdata()) for line in dots] == [6, 2]
    assert list(dots[1].get_xdata()) == [12, 23]
    texts = [t.get_text() for t in ax.texts]
    assert "2 + 9" in texts and "5 waiting" in texts and texts.count("2 rows") == 4  # the short steps, by rows
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["yours: 6 fit steps, 6 updates",
                                                                   "keras: 10 fit steps, 2 updates"]
    # zoomed on examples 9 to 26, by hand: yours' steps 12-14, 14-20, 20-26 lie inside, updates at 12, 14, 20, 26;
    # keras's steps 9-12 ... 23-26 (six) inside, updates at 12 and 23; its crossing (ends 23) and its wait (from 23)
    # are labelled; the short steps at 26-28 are out of view, those at 12-14 labelled
    fig = plot_fit_steps(lanes, epoch_rows=14, window=(9, 26))
    ax, = fig.axes
    assert ax.get_xlim() == (9, 26)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["yours: 3 fit steps, 4 updates in view",
                                                                   "keras: 6 fit steps, 2 updates in view"]
    dots = [line for line in ax.lines if line.get_label().startswith(("yours", "keras"))]
    assert [list(line.get_xdata()) for line in dots] == [[12, 14, 20, 26], [12, 23]]
    assert sorted(t.get_text() for t in ax.texts) == ["2 + 9", "2 rows", "2 rows", "5 waiting"]
    fig = plot_fit_steps(lanes, epoch_rows=14, window=(0, 11))  # before any crossing, wait or short step
    assert [t.get_text() for t in fig.axes[0].texts] == []
    with pytest.raises(ValueError, match="one update count per fit step"):
        plot_fit_steps({"x": ([1, 2], [1], 1)}, epoch_rows=3)
    with pytest.raises(ValueError, match="window"):
        plot_fit_steps(lanes, epoch_rows=14, window=(5, 5))
