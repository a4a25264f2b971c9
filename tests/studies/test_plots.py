from gradlab.studies.plots import plot_learning_rates


def test_plot_learning_rates_draws_identical_strategies_as_one_line():
    rates = {"large_batch": [0.5, 0.25], "fused": [0.5, 0.25], "keras": [0.25, 0.0625]}
    ax, = plot_learning_rates(rates, accum_steps=2).axes
    assert len(ax.lines) == 2
    assert list(ax.lines[0].get_ydata()) == [0.5, 0.25]
    assert list(ax.lines[1].get_ydata()) == [0.25, 0.0625]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["large_batch, fused (2 identical)", "keras"]
