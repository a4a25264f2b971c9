"""One GPU's update against its card: each bar is drawn from the values given, the card as a line."""
import pytest

from gradlab.studies.figures.plan_memory import plot_plan_memory


def test_plan_figure_stacks_the_activations_on_the_fixed_terms():
    fig = plot_plan_memory([2, 4, 8], 18.5, [200.0, 110.0, 65.0], 79.5, chosen=8)
    ax = fig.axes[0]
    fixed, activations = ax.containers[:2]
    assert [bar.get_height() for bar in fixed] == [18.5] * 3
    assert [bar.get_y() for bar in activations] == [18.5] * 3
    assert [bar.get_height() for bar in activations] == pytest.approx([181.5, 91.5, 46.5])
    assert [text.get_text() for text in ax.texts] == ["200.0", "110.0", "65.0"]  # each bar's total
    card = ax.lines[0]
    assert list(card.get_ydata()) == [79.5, 79.5] and card.get_label() == "the card: 79.5 GiB"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["N = 2", "N = 4", "N = 8 (plan)"]
    assert activations[2].get_facecolor() != activations[0].get_facecolor()  # the plan stands out
    assert ax.get_ylim() == pytest.approx((0, 1.12 * 200))
    legend = {t.get_text(): h for t, h in zip(ax.get_legend().get_texts(), ax.get_legend().legend_handles)}
    assert legend["activations, the plan: N = 8"].get_facecolor() == activations[2].get_facecolor()  # named
    assert legend["activations of one micro-batch"].get_facecolor() == activations[0].get_facecolor()
    assert list(legend)[-1] == "the card: 79.5 GiB"


def test_plan_figure_refuses_what_it_cannot_draw():
    with pytest.raises(ValueError, match="one value each"):
        plot_plan_memory([2, 4], 1.0, [3.0], 8.0)
    with pytest.raises(ValueError, match="hold the fixed"):
        plot_plan_memory([2], 5.0, [3.0], 8.0)
    with pytest.raises(ValueError, match="finite"):
        plot_plan_memory([2], 1.0, [float("nan")], 8.0)
    with pytest.raises(ValueError, match="not among"):
        plot_plan_memory([2, 4], 1.0, [3.0, 2.0], 8.0, chosen=8)
    assert plot_plan_memory([1], 1.0, [3.0], 8.0).axes[0].get_ylim() == pytest.approx((0, 1.12 * 8))


def test_plan_figure_labels_each_bar_by_its_micro_batch_when_given_the_batch():
    fig = plot_plan_memory([4, 8, 16, 32], 18.6, [111.6, 65.1, 41.9, 30.3], 79.6, chosen=8, batch=128)
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["b = 32\nN = 4", "b = 16\nN = 8 (plan)", "b = 8\nN = 16", "b = 4\nN = 32"]
    assert "activations, the plan: b = 16, N = 8" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    with pytest.raises(ValueError, match="equal micro-batches"):
        plot_plan_memory([3], 1.0, [3.0], 8.0, batch=128)


def test_plan_figure_adds_a_hatched_bar_for_the_update_planned_another_way():
    fig = plot_plan_memory([4, 8], 18.6, [111.6, 65.1], 79.6, chosen=8, batch=128,
                           extra=("b = 4\nN = 32\nscores stored", 50.3, "activations with the scores stored"))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["b = 32\nN = 4", "b = 16\nN = 8 (plan)",
                                                             "b = 4\nN = 32\nscores stored"]
    other = ax.containers[-1][0]
    assert other.get_y() == 18.6 and other.get_height() == pytest.approx(50.3 - 18.6) and other.get_hatch() == "///"
    assert [text.get_text() for text in ax.texts] == ["111.6", "65.1", "50.3"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "activations with the scores stored" in legend and legend[-1] == "the card: 79.6 GiB"
    assert ax.get_legend().get_bbox_to_anchor().y0 < ax.bbox.y0  # below the axes, clear of the card's line
    with pytest.raises(ValueError, match="extra bar"):
        plot_plan_memory([4], 18.6, [111.6], 79.6, extra=("x", 10.0, "y"))
