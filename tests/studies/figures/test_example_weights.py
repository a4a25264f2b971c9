import matplotlib.figure
import matplotlib.pyplot as plt
import pytest

from gradlab.studies.figures.example_weights import plot_example_weights, plot_miss_against_imbalance


def test_plot_example_weights_gives_each_example_1_over_k_n_i_against_1_over_B():
    fig = plot_example_weights([32, 32, 32, 4])
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    heights = [p.get_height() for p in ax.patches]
    assert heights[:4] == pytest.approx([1 / 128, 1 / 128, 1 / 128, 1 / 16])  # plain: 1/(N n_i)
    assert heights[4:] == pytest.approx([1 / 100] * 4)  # weighted: 1/B, the large batch's
    assert [t.get_text() for t in ax.texts] == ["x0.781", "x0.781", "x0.781", "x6.25"]
    with pytest.raises(ValueError):
        plot_example_weights([])
    with pytest.raises(ValueError):
        plot_example_weights([3, 0])


def test_plot_miss_against_imbalance_puts_each_update_at_its_token_imbalance():

    fig = plot_miss_against_imbalance([0.041, 0.002, 0.092], [[145, 130], [129, 130], [123, 152]])
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    dots = ax.collections[0].get_offsets()
    assert list(dots[:, 0]) == pytest.approx([15 / 275, 1 / 259, 29 / 275])  # |D_0 - D_1| / (D_0 + D_1)
    assert list(dots[:, 1]) == pytest.approx([4.1, 0.2, 9.2])  # the misses, in percent
    assert [t.get_text() for t in ax.texts] == ["[145, 130]", "[129, 130]", "[123, 152]"]
    assert "imbalance" in ax.get_xlabel() and "%" in ax.get_ylabel()
    for misses, tokens in (([], []), ([0.1], [[1, 2], [3, 4]]), ([-0.1], [[1, 2]]), ([0.1], [[0, 2]]), ([0.1], [[5]])):
        with pytest.raises(ValueError):
            plot_miss_against_imbalance(misses, tokens)
