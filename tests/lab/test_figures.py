"""The lab's figures: their panels, legends under the data, and the three-panel picture."""
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from gradlab.lab import figures

from figure_data import group, result


def legends_below_the_axes(fig):
    """Every legend of `fig` is a figure legend whose top is under every Axes' bottom."""
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    assert all(ax.get_legend() is None for ax in fig.axes)
    for legend in fig.legends:
        top = legend.get_window_extent(renderer).y1
        above = [ax for ax in fig.axes if ax.get_window_extent(renderer).y0 > top]
        assert above, "the legend overlaps a panel"
    return len(fig.legends)


def test_figures_draw_empty_partial_and_finished_groups():
    partial = group(result(losses=np.linspace(2.0, 1.0, 12)))
    finished = group(result(accum_steps=2, micro_batch=50), label="done", peak_mb=12.0)
    for x in figures.X_AXES:
        fig = figures.plot_lab([partial, finished], x=x, current=1)
        assert len(fig.axes) == 3 and legends_below_the_axes(fig) == 1
    empty = figures.plot_lab([])
    assert [t.get_text() for t in empty.axes[0].texts] == ["press Run"] and not empty.legends
    cost = figures.plot_lab_batches([partial, finished]).axes[2]
    assert [t.get_text() for t in cost.texts] == ["done:  2.0 ms · 12 MiB"]  # finished runs only


def test_the_difference_is_named_in_the_legend():
    ref = result(strategy="large_batch", accuracy=0.9)
    off = result(accum_steps=4, micro_batch=25, accuracy=0.85, losses=ref.losses + 0.02)
    fig = figures.plot_lab([group(off, reference={0: ref}, label="off")])
    loss = np.linspace(2.0, 0.5, 40)  # the hand-made runs' losses: a miss of 0.02 at every update
    assert [t.get_text() for t in fig.legends[0].get_texts()] == \
        [f"off: miss {100 * 0.02 * np.sqrt(40) / np.linalg.norm(loss):.3g}%, accuracy -5.0 pts"]
    np.testing.assert_allclose(fig.axes[2].lines[0].get_ydata(), 0.02)


def test_the_picture_has_three_panels_and_one_legend_under_them():
    runs = [group(result(accum_steps=n, micro_batch=25, noise_std=0.1 / n, accuracy=0.8 + n / 100))
            for n in (1, 2, 4)]
    fig = figures.plot_picture(runs, x="examples")
    assert len(fig.axes) == 3 and legends_below_the_axes(fig) == 1
    width, _ = fig.get_size_inches() * figures.PICTURE_DPI
    assert width == pytest.approx(960)
    assert fig.axes[0].get_xlabel() == "examples seen (updates × B)"
    accuracy = fig.axes[2]
    assert accuracy.get_ylabel() == "final test accuracy (%)"
    np.testing.assert_allclose(np.asarray(accuracy.lines[0].get_ydata(), float), [81, 82, 84])  # percent, by B


def test_an_unknown_axis_is_refused():
    for plot in (figures.plot_lab, figures.plot_picture):
        with pytest.raises(ValueError, match="x must be one of updates, examples, seconds; got 'hours'"):
            plot([], x="hours")


def test_the_picture_with_labels_names_each_group_once_and_gives_each_its_paired_gap_row():
    # two configurations at one B (as fused N=4 and keras N=4 at B = 100) stay apart; the first is the reference
    ref = group(result(strategy="large_batch", accuracy=0.9), result(strategy="large_batch", seed=1, accuracy=0.92))
    off = group(result(accum_steps=4, micro_batch=25, accuracy=0.85),
                result(accum_steps=4, micro_batch=25, seed=1, accuracy=0.93),
                reference={0: ref.results[0]}, label="a long label that is not used")
    fig = figures.plot_picture([ref, off], labels=["large batch ×2", "keras N=4"], title="cosine lr schedule")
    assert legends_below_the_axes(fig) == 1
    assert fig._suptitle.get_text() == "cosine lr schedule"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == \
        ["large batch ×2", "keras N=4: exact (0 spacings, bit for bit), accuracy -5.0 pts"]
    accuracy = fig.axes[2]
    assert [t.get_text() for t in accuracy.texts] == ["large batch ×2 (the reference)", "keras N=4"]
    assert accuracy.get_title() == "Final accuracy gap\nto the reference"
    assert fig.axes[0].get_title() == "Training loss (mean of 15 updates)"  # two seeds: no "one seed"
    # the middle title on two lines, clear of its neighbours' titles and under the suptitle
    fig.canvas.draw()
    boxes = [ax.title.get_window_extent() for ax in fig.axes]
    assert fig.axes[1].get_title() == "|Δ| from one large batch,\nmax over seeds"
    assert boxes[0].x1 < boxes[1].x0 and boxes[1].x1 < boxes[2].x0, boxes
    assert max(b.y1 for b in boxes) < fig._suptitle.get_window_extent().y0
    dots = [np.asarray(line.get_xdata(), float) for line in accuracy.lines[1:]]  # after the zero line
    np.testing.assert_allclose(dots[0], [0.0])  # the reference's row
    np.testing.assert_allclose(dots[1], [-5.0, 1.0])  # seed 0: 85 - 90; seed 1: 93 - 92, paired by seed
    np.testing.assert_allclose(dots[2], [-2.0])  # their mean
    with pytest.raises(ValueError, match="one label per group: 2 groups, 1 labels"):
        figures.plot_picture([ref, off], labels=["one"])


@pytest.mark.parametrize("first, shown", [
    ("large batch (black)", "large batch (black) (the reference)"),  # lesson 17's label now: one line
    ("large batch (black, under the others)", "large batch\n(black, under the others)\n(the reference)")])
def test_the_paired_rows_keep_lesson_17s_labels_inside_the_panel(first, shown):
    # lesson 17's three labels, the first the longest: "large batch (black, under the others) (the reference)" once
    # ran past the frame; now each parenthesis that would not fit starts a line
    ref = group(*[result(strategy="large_batch", seed=s, accuracy=0.9) for s in (0, 1, 2)])
    ways = [group(*[result(accum_steps=4, micro_batch=25, seed=s, accuracy=0.9 + d) for s in (0, 1, 2)],
                  reference={s: ref.results[s] for s in (0, 1, 2)}) for d in (0.0, -0.05)]
    labels = [first, "gradlab's way (dashed)", "Keras's way"]
    fig = figures.plot_picture([ref, *ways], labels=labels, title="exact: N = 4, b = 25, 3 seeds")
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    panel = fig.axes[2]
    frame = panel.get_window_extent(renderer)
    texts = {t.get_text(): t.get_window_extent(renderer) for t in panel.texts}
    # broken before parentheses only, each whole: the reference's on two or three lines, the others on one
    assert list(texts) == [shown, *labels[1:]]
    for text, box in texts.items():  # every label inside the frame, left to right and bottom to top
        assert frame.x0 < box.x0 and box.x1 < frame.x1 and frame.y0 < box.y0 and box.y1 < frame.y1, (text, box, frame)
    boxes = list(texts.values())  # each label clear of the next row's
    assert all(upper.y0 > lower.y1 for upper, lower in zip(boxes, boxes[1:])), boxes
    # the panel's title inside the picture, clear of the middle one and of the picture's title
    titles = [ax.title.get_window_extent(renderer) for ax in fig.axes]
    assert titles[1].x1 < titles[2].x0 and titles[2].x1 < fig.bbox.x1, (titles, fig.bbox)
    assert titles[2].y1 < fig._suptitle.get_window_extent(renderer).y0


def test_one_seed_pictures_say_so_and_an_exact_zero_is_labelled_at_the_floor():
    ref = result(strategy="large_batch", accuracy=0.9)
    same = group(result(accum_steps=4, micro_batch=25, accuracy=0.9, losses=ref.losses), reference={0: ref})
    live = figures.plot_lab([same])
    assert live.axes[0].get_title() == "Training loss (mean of 15 updates), one seed"
    assert live.axes[1].get_title() == "Test accuracy while training, one seed"
    assert "an exact 0 is drawn at 1e-09" in [t.get_text() for t in live.axes[2].texts]
    # the note sits in a strip under the floor, where no curve reaches: the floor at least 12 % up the log axis
    note = next(t for t in live.axes[2].texts if t.get_text().startswith("an exact 0"))
    low, high = np.log10(live.axes[2].get_ylim())
    assert (-9 - low) / (high - low) >= 0.12 - 1e-9 and note.get_position()[1] < 0.05
    assert any(list(line.get_ydata()) == [1e-9, 1e-9] for line in live.axes[2].lines)  # the floor, dotted
    picture = figures.plot_picture([same])
    assert picture.axes[1].get_title() == "|Δ| from one large batch,\none seed"


def test_one_seed_draws_each_groups_first_seed_against_examples_and_b():
    # a group that kept three seeds is drawn from its first only, as the single-seed ones
    three = group(result(accum_steps=4, micro_batch=25, accuracy=0.80),
                  result(accum_steps=4, micro_batch=25, seed=1, accuracy=0.99),
                  result(accum_steps=4, micro_batch=25, seed=2, accuracy=0.99))
    one = group(result(accum_steps=1, micro_batch=25, accuracy=0.70))
    fig = figures.plot_one_seed([one, three], ["B = 25", "B = 100"], upto=1_000, span=(200, 400))
    assert legends_below_the_axes(fig) == 1
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["B = 25", "B = 100"]
    loss, accuracy = fig.axes
    assert loss.get_xlim() == (0, 1_000) and accuracy.get_xscale() == "log"
    points = [(float(l.get_xdata()[0]), float(l.get_ydata()[0])) for l in accuracy.lines]
    np.testing.assert_allclose(points, [(25, 70.0), (100, 80.0)])  # seed 0's accuracy, not the mean 92.7
    smooth = [l for l in loss.lines if l.get_label() == "B = 100"][0]
    assert np.nanmax(smooth.get_xdata()) == 100 * 40  # x = updates × B
    with pytest.raises(ValueError, match="one label per group: 2 groups, 1 labels"):
        figures.plot_one_seed([one, three], ["one"], upto=1_000)


def test_one_seed_with_seeds_draws_each_groups_mean_and_std_of_accuracy_against_b():
    three = group(result(accum_steps=4, micro_batch=25, accuracy=0.80),
                  result(accum_steps=4, micro_batch=25, seed=1, accuracy=0.90),
                  result(accum_steps=4, micro_batch=25, seed=2, accuracy=0.97))
    one = group(result(accum_steps=1, micro_batch=25, accuracy=0.70))
    fig = figures.plot_one_seed([one, three], ["B = 25", "B = 100"], upto=1_000, seeds=True)
    accuracy = fig.axes[1]
    assert accuracy.get_title() == "Final test accuracy, mean ± std of 1/3 seeds"
    points = [(float(c.lines[0].get_xdata()[0]), float(c.lines[0].get_ydata()[0])) for c in accuracy.containers]
    np.testing.assert_allclose(points, [(25, 70.0), (100, 89.0)])  # (80 + 90 + 97) / 3, not seed 0's 80
    bars = [c.lines[2][0].get_segments()[0][:, 1] for c in accuracy.containers]  # each bar's (low, high)
    std = float(np.std([80.0, 90.0, 97.0], ddof=1))  # 8.54..., written out: ddof=1, as the notebook prints
    np.testing.assert_allclose(bars, [[70.0, 70.0], [89.0 - std, 89.0 + std]])


def test_one_seed_can_tick_the_batch_axis_at_the_groups_batches():
    groups = [group(result(accum_steps=n, micro_batch=25)) for n in (1, 2, 4, 8)]
    labels = [f"B = {25 * n}" for n in (1, 2, 4, 8)]
    accuracy = figures.plot_one_seed(groups, labels, upto=1_000, batch_ticks=True).axes[1]
    assert accuracy.get_xscale() == "log"  # still log2 spacing, now read at B itself
    assert list(accuracy.get_xticks()) == [25, 50, 100, 200]
    assert [t.get_text() for t in accuracy.get_xticklabels()] == ["25", "50", "100", "200"]
    plain = figures.plot_one_seed(groups, labels, upto=1_000).axes[1]  # the default: powers of two
    assert 25 not in list(plain.get_xticks())


def test_one_seed_can_smooth_each_curve_over_about_the_same_number_of_examples():
    rng = np.random.default_rng(0)
    groups = [group(result(accum_steps=n, micro_batch=25, losses=rng.uniform(0, 2, 40))) for n in (1, 4, 8)]
    labels = ["B = 25", "B = 100", "B = 200"]
    fig = figures.plot_one_seed(groups, labels, upto=8_000, window_examples=600)
    loss = fig.axes[0]
    assert loss.get_title() == "Training loss (centred mean of 500–600 examples), one seed"
    for g, name, width in zip(groups, labels, (23, 5, 3)):  # 23·25 = 575, 5·100 = 500, 3·200 = 600
        losses = g.results[0].losses
        by_hand = np.convolve(losses, np.ones(width) / width, mode="valid")  # full windows only
        line = [l for l in loss.lines if l.get_label() == name][0]
        drawn = np.asarray(line.get_ydata(), float)
        np.testing.assert_allclose(drawn[width // 2:len(losses) - width // 2], by_hand)
        assert np.isnan(drawn[:width // 2]).all()
    plain = figures.plot_one_seed(groups, labels, upto=8_000).axes[0]  # the default: 15 updates each
    assert plain.get_title() == "Training loss (mean of 15 updates), one seed"
    assert [figures.window_updates(b, 600) for b in (25, 50, 100, 200, 1000)] == [23, 11, 5, 3, 1]


@pytest.mark.parametrize("low, high", [(0.015, 0.15), (1e-9, 0.6)])
def test_the_pictures_difference_axis_labels_its_ticks_clear_of_its_y_label(low, high):
    # within one decade (lesson 17's BatchNorm runs) minor labels once ran under the y label;
    # over many decades (its cosine runs) a 1-2-5 locator once left the axis with no labels
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    losses = np.linspace(1.0, 0.5, 40)
    ref = group(result(strategy="large_batch", losses=losses))
    off = group(result(accum_steps=4, micro_batch=25, losses=losses + np.geomspace(low, high, 40)),
                reference={0: ref.results[0]})
    fig = figures.plot_picture([ref, off], labels=["large batch", "N=4"])
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    diff = fig.axes[1]
    label = diff.yaxis.label.get_window_extent(renderer)
    ticks = [t.get_window_extent(renderer) for t in diff.get_yticklabels(which="both") if t.get_text()]
    assert len(ticks) >= 2
    assert not any(label.overlaps(t) for t in ticks)
    assert label.x0 > fig.axes[0].get_window_extent(renderer).x1  # and clear of the loss panel
