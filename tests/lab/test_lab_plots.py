"""The lab's figures, from hand-made results: what each panel draws is checked by value."""
from types import SimpleNamespace

import numpy as np
import pytest

from gradlab.lab import lab_plots
from gradlab.studies.experiments import RunConfig, RunResult

UPDATES = 40


def result(accum_steps=1, micro_batch=100, seed=0, losses=None, accuracy=0.9, noise_std=0.1,
           strategy="fused", seconds_per_update=0.002, **setting):
    config = RunConfig(strategy=strategy, accum_steps=accum_steps, micro_batch=micro_batch,
                       updates=UPDATES, eval_every=20, seed=seed, sampling="paired", **setting)
    losses = np.linspace(2.0, 0.5, UPDATES) if losses is None else np.asarray(losses, float)
    return RunResult(config, losses, np.array([0, 20, 40][:1 + len(losses) // 20]),
                     np.array([0.1, 0.8, accuracy][:1 + len(losses) // 20]), accuracy,
                     seconds_per_update, 1.0, {"std": noise_std})


def group(*results, reference=None, label=None, peak_mb=None):
    return SimpleNamespace(results=list(results), reference=reference or {}, peak_mb=peak_mb,
                           label=label or f"N={results[0].config.accum_steps}", color=None)


def test_reference_difference_is_the_largest_gap_over_seeds():
    ref = {s: result(strategy="large_batch", seed=s, accuracy=0.90) for s in (0, 1)}
    off = [result(accum_steps=4, micro_batch=25, seed=s, accuracy=0.88 + 0.01 * s,
                  losses=ref[s].losses + (0.1 if s else 0.3) * (np.arange(UPDATES) == 5))
           for s in (0, 1)]
    delta, worst, accuracy = lab_plots.reference_difference(group(*off, reference=ref))
    assert delta[5] == pytest.approx(0.3) and worst == pytest.approx(0.3)
    assert np.count_nonzero(delta) == 1
    assert accuracy == pytest.approx(np.mean([0.88 - 0.90, 0.89 - 0.90]))
    assert lab_plots.reference_difference(group(*off)) is None  # no twin, no difference
    same = group(ref[0], reference={0: ref[0]})
    assert lab_plots.reference_difference(same) is None  # a large batch is not compared with itself


def test_a_running_seed_counts_only_where_it_has_got_to():
    stack = lab_plots._stack([np.array([1.0, 3.0, 5.0]), np.array([3.0])])
    mean, std, count = lab_plots._mean_std(stack)
    np.testing.assert_allclose(mean, [2.0, 3.0, 5.0])
    np.testing.assert_allclose(std, [np.sqrt(2.0), 0.0, 0.0])
    assert count.tolist() == [2, 1, 1]


def test_x_axes():
    g = group(result(accum_steps=4, micro_batch=25, seconds_per_update=0.01))
    np.testing.assert_allclose(lab_plots._x_of(g, [1, 2], "updates"), [1, 2])
    np.testing.assert_allclose(lab_plots._x_of(g, [1, 2], "examples"), [100, 200])
    np.testing.assert_allclose(lab_plots._x_of(g, [1, 2], "seconds"), [0.01, 0.02])


def test_families_and_the_fitted_noise_slope():
    # Fixed b = 25 over B = 25, 50, 100 with noise falling as B^-0.8; one more run at B = 100.
    fixed_b = [group(result(accum_steps=n, micro_batch=25, noise_std=(25 * n) ** -0.8))
               for n in (1, 2, 4)]
    large = group(result(strategy="large_batch", accum_steps=1, micro_batch=100,
                         noise_std=100 ** -0.8))
    families = lab_plots._families(fixed_b + [large])
    assert [(kind, value, len(members)) for kind, value, members in families] == \
        [("b", 25, 3), ("B", 100, 2)]
    fig = lab_plots.plot_lab_batches(fixed_b + [large])
    ax_acc, ax_noise, ax_cost = fig.axes
    labels = ax_noise.get_legend_handles_labels()[1]
    assert labels[0] == "fixed b = 25: fused N=1, fused N=2, fused N=4 (fitted slope -0.80)"
    assert labels[1] == "fixed B = 100: large_batch N=1, fused N=4"
    # Equal accuracies at one B share one label: they coincide.
    assert "large_batch N=1 = fused N=4" in [t.get_text() for t in ax_acc.texts]


def test_settings_are_named_and_split_families():
    assert lab_plots.setting_tag(result().config) == ""
    assert lab_plots.setting_tag(result(accum_steps=4, micro_batch=25, schedule="cosine").config) \
        == ", cosine lr"
    assert lab_plots.setting_tag(result(accum_steps=4, micro_batch=25, short_by=2).config) \
        == ", uneven (B = N·b - 2)"
    cosine = group(result(accum_steps=4, micro_batch=25, schedule="cosine"))
    plain = group(result(strategy="large_batch"))
    assert [kind for kind, _, _ in lab_plots._families([cosine, plain])] == ["other"]


def test_figures_draw_empty_partial_and_finished_groups():
    partial = group(result(losses=np.linspace(2.0, 1.0, 12)))
    finished = group(result(accum_steps=2, micro_batch=50), label="done", peak_mb=12.0)
    for x in lab_plots.X_AXES:
        assert len(lab_plots.plot_lab([partial, finished], x=x, current=1).axes) == 3
    assert len(lab_plots.plot_lab([]).axes) == 3
    cost = lab_plots.plot_lab_batches([partial, finished]).axes[2]
    assert [t.get_text() for t in cost.texts] == ["done:  2.0 ms · 12 MB"]  # finished runs only
