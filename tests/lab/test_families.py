"""Families of configurations against the effective batch: grouping, fit and names."""
from matplotlib.figure import Figure

from gradlab.lab import families

from figure_data import group, result


def test_families_and_the_fitted_noise_slope():
    # Fixed b = 25 over B = 25, 50, 100 with noise falling as B^-0.8; one more run at B = 100.
    fixed_b = [group(result(accum_steps=n, micro_batch=25, noise_std=(25 * n) ** -0.8))
               for n in (1, 2, 4)]
    large = group(result(strategy="large_batch", accum_steps=1, micro_batch=100,
                         noise_std=100 ** -0.8))
    found = families.families(fixed_b + [large])
    assert [(kind, value, len(members)) for kind, value, members in found] == \
        [("b", 25, 3), ("B", 100, 2)]
    ax_acc, ax_noise = Figure().subplots(1, 2)
    families.against_batch(ax_acc, ax_noise, fixed_b + [large])
    labels = ax_noise.get_legend_handles_labels()[1]
    assert labels[0] == "fixed b = 25: fused N=1, fused N=2, fused N=4 (fitted slope -0.80)"
    # Equal accuracy and noise at one B: the legend says they coincide.
    assert labels[1] == "fixed B = 100: large_batch N=1 = fused N=4"
    assert ax_acc.get_legend_handles_labels()[1] == labels
    assert ax_acc.get_xticks().tolist() == [25, 50, 100]
    # Accuracy in percent, as every printed number: result()'s accuracy 0.9 is drawn at 90.
    assert ax_acc.lines[0].get_ydata().tolist() == [90.0, 90.0, 90.0]
    assert ax_acc.get_ylabel() == "final test accuracy (%)"
    assert len(ax_acc.texts) == len(ax_noise.texts) == 0  # no names inside the data


def test_points_that_differ_are_listed_apart():
    a = group(result(accum_steps=4, micro_batch=25, accuracy=0.9))
    b = group(result(strategy="keras", accum_steps=4, micro_batch=25, accuracy=0.8))
    c = group(result(strategy="large_batch", accum_steps=1, micro_batch=100, accuracy=0.9))
    assert families._coinciding([a, b, c], [0.9, 0.8, 0.9], [0.1, 0.1, 0.1]) == \
        "fused N=4 = large_batch N=1, keras N=4"
    assert families._coinciding([a, c], [0.9, 0.9], [0.1, 0.2]) == "fused N=4, large_batch N=1"


def test_settings_are_named_and_split_families():
    assert families.setting_tag(result().config) == ""
    assert families.setting_tag(result(accum_steps=4, micro_batch=25, schedule="cosine").config) \
        == ", cosine lr"
    assert families.setting_tag(result(accum_steps=4, micro_batch=25, short_by=2).config) \
        == ", uneven (B = N·b - 2)"
    cosine = group(result(accum_steps=4, micro_batch=25, schedule="cosine"))
    plain = group(result(strategy="large_batch"))
    assert [kind for kind, _, _ in families.families([cosine, plain])] == ["other"]


def test_the_noise_title_names_the_fit_only_when_one_is_drawn():
    # One fixed b over two B: a fit, drawn dashed. One B alone: no fit, so no "dashed" in the title.
    fixed_b = [group(result(accum_steps=n, micro_batch=25, noise_std=(25 * n) ** -0.8)) for n in (1, 2)]
    ax_acc, ax_noise = Figure().subplots(1, 2)
    families.against_batch(ax_acc, ax_noise, fixed_b)
    assert [line.get_linestyle() for line in ax_noise.lines if line.get_linestyle() == "--"] == ["--"]
    assert "dashed: fit" in ax_noise.get_title()
    one_b = [group(result(accum_steps=4, micro_batch=25)),
             group(result(strategy="large_batch", accum_steps=1, micro_batch=100))]
    ax_acc, ax_noise = Figure().subplots(1, 2)
    families.against_batch(ax_acc, ax_noise, one_b)
    assert not [line for line in ax_noise.lines if line.get_linestyle() == "--"]
    assert ax_noise.get_title() == "Loss noise against B"
