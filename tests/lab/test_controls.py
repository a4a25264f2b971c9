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
    box = controls.layout(c, {"updates": 150})
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
