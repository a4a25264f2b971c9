"""The lab's widgets: their starting values, the CSS classes the browser tests find, a run's row."""
from types import SimpleNamespace

from gradlab.lab import controls, settings


def make():
    return controls.make_controls(("fused", "keras"), "keras", 4, 25, 0.5, 2, "exact", "examples", 150)


def test_controls_start_at_the_given_values_within_the_limits():
    c = make()
    assert (c.strategy.value, c.accum_steps.value, c.micro_batch.value, c.seeds.value) == ("keras", 4, 25, 2)
    assert c.lr.value == 0.5 and c.x_axis.value == "examples" and c.progress.max == 150
    assert (c.accum_steps.max, c.micro_batch.max, c.seeds.max) == (
        settings.MAX_ACCUM_STEPS, settings.MAX_MICRO_BATCH, settings.MAX_SEEDS)
    assert c.setting.options == tuple(settings.SETTINGS)
    assert not any(s.continuous_update for s in (c.accum_steps, c.micro_batch, c.lr, c.seeds))


def test_each_widget_has_its_css_class():
    c = make()
    classes = {name: [k for k in widget._dom_classes if k.startswith("gradlab-")]
               for name, widget in vars(c).items()}
    assert classes["button"] == ["gradlab-run"] and classes["stop_button"] == ["gradlab-stop"]
    assert classes["accum_steps"] == ["gradlab-accum-steps"]
    assert classes["batch"] == ["gradlab-effective-batch"] and classes["plot"] == ["gradlab-plot"]
    assert all(len(v) == 1 for v in classes.values())
    box = controls.layout(c)
    assert "gradlab-lab" in box._dom_classes


def test_a_run_row_toggles_and_removes_its_group():
    group = SimpleNamespace(visible=True, label="fused N=2 b=8 lr=0.1", color="#1f77b4")
    seen = []
    row = controls.run_row(group, lambda g, v: seen.append(("toggle", v)),
                           lambda g: seen.append(("remove", g is group)))
    swatch, box, remove = row.children
    assert "#1f77b4" in swatch.value and box.description == group.label
    box.value = False
    remove.click()
    assert seen == [("toggle", False), ("remove", True)]


def test_the_line_under_the_controls_says_clipping_only_for_the_clipping_settings():
    fixed = {"updates": 150, "optimizer": "sgd"}
    assert settings.fixed_text(fixed, "exact") == "every run: updates=150, optimizer=sgd; this setting does not clip"
    assert settings.fixed_text(fixed, "clip each micro-batch") == (
        "every run: updates=150, optimizer=sgd; this setting clips at global norm 1")
    clipping = {"clip each micro-batch", "clip the update once"}  # the two settings named for clipping
    for name in settings.SETTINGS:
        assert ("clips at global norm 1" in settings.fixed_text(fixed, name)) == (name in clipping)


def test_the_lab_shows_that_line_for_its_setting(quick_plots):
    from gradlab.lab.view import Lab
    lab = Lab(setting="exact", memory=False, cache=False)
    assert lab.controls.every_run.value.endswith("this setting does not clip</small>")
    lab.setting.value = "clip the update once"
    assert lab.controls.every_run.value.endswith("this setting clips at global norm 1</small>")
    assert lab.controls.every_run in lab.widget.children
