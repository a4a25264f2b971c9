"""The lab's widgets, made and laid out: the controls, the buttons and what shows the runs.

Each widget carries a CSS class `gradlab-<name>` (the browser tests find them by it); the
whole lab is `gradlab-lab`.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

from types import SimpleNamespace

import ipywidgets as w

from .settings import LR_EXPONENTS, MAX_ACCUM_STEPS, MAX_MICRO_BATCH, MAX_SEEDS, SETTINGS


def make_controls(strategies, strategy, accum_steps, micro_batch, lr, seeds, setting, x, updates):
    """The lab's widgets at their starting values, by name (`SimpleNamespace`)."""
    wide, long = {"description_width": "9em"}, w.Layout(width="400px")
    slider = dict(continuous_update=False, style=wide, layout=long)
    image = dict(format="png", layout=w.Layout(width="100%", max_width="1200px"))
    c = SimpleNamespace(
        strategy=w.Dropdown(options=strategies, value=strategy, description="strategy",
                            style=wide),
        accum_steps=w.IntSlider(value=accum_steps, min=1, max=MAX_ACCUM_STEPS,
                                description="N (accum_steps)", **slider),
        micro_batch=w.IntSlider(value=micro_batch, min=1, max=MAX_MICRO_BATCH,
                                description="b (micro_batch)", **slider),
        lr=w.FloatLogSlider(value=lr, base=10, min=LR_EXPONENTS[0], max=LR_EXPONENTS[1],
                            step=0.05, description="lr", readout_format=".3g", **slider),
        seeds=w.IntSlider(value=seeds, min=1, max=MAX_SEEDS, description="seeds", **slider),
        setting=w.Dropdown(options=list(SETTINGS), value=setting, description="setting",
                           style=wide, layout=w.Layout(width="400px")),
        x_axis=w.ToggleButtons(options=[("updates", "updates"), ("examples", "examples"),
                                        ("seconds", "seconds")], value=x,
                               tooltips=["updates", "examples seen: updates × B",
                                         "seconds: updates × measured seconds per update"],
                               description="x axis",
                               style={"description_width": "4em", "button_width": "9em"}),
        batch=w.Label(),
        every_run=w.HTML(),  # what every run shares and whether the setting clips (`settings.fixed_text`)
        button=w.Button(description="Run", button_style="primary", icon="play",
                        tooltip="train this configuration for every seed (or take it from the cache)"),
        stop_button=w.Button(description="Stop", button_style="warning", icon="stop",
                             disabled=True,
                             tooltip="end the run after its current update; nothing is cached"),
        measure_button=w.Button(description="Measure", icon="balance-scale",
                                tooltip="run this setting as one large batch, gradlab's way and the "
                                        "other way (Keras's own accumulation or a hand recipe), "
                                        "and show the differences"),
        progress=w.IntProgress(value=0, min=0, max=updates, description="progress", style=wide),
        status=w.Label("Ready: set N, b and lr, then press Run."),
        plot=w.Image(**image),
        summary=w.Image(**image),
        runs=w.VBox(),   # one row per configuration: shown or hidden, and remove
        log=w.Output(),  # notes of the runs, and the traceback of a failed one
    )
    for name, widget in vars(c).items():
        widget.add_class("gradlab-" + {"button": "run", "stop_button": "stop",
                                       "measure_button": "measure", "batch": "effective-batch",
                                       "x_axis": "x-axis"}.get(name, name.replace("_", "-")))
    return c


def layout(c):
    """The lab as one VBox (class `gradlab-lab`)."""
    box = w.VBox([
        w.HBox([w.VBox([c.strategy, c.accum_steps, c.micro_batch, c.lr]),
                w.VBox([c.setting, c.seeds, c.batch,
                        w.HBox([c.button, c.stop_button, c.measure_button])])]),
        c.every_run,
        c.progress, c.status, c.x_axis, c.plot, c.summary,
        w.HTML("<b>Runs</b> <small>(untick to hide, ✕ to remove; the cache keeps them)</small>"),
        c.runs, c.log])
    box.add_class("gradlab-lab")
    return box


def run_row(group, on_toggle, on_remove):
    """One configuration's row under the plots: its colour, a checkbox and ✕."""
    box = w.Checkbox(value=group.visible, description=group.label, indent=False,
                     layout=w.Layout(width="auto"))
    box.observe(lambda change: on_toggle(group, change["new"]), "value")
    remove = w.Button(icon="times", tooltip="remove from the plot (the cache keeps it)",
                      layout=w.Layout(width="2.5em"))
    remove.on_click(lambda _: on_remove(group))
    swatch = w.HTML(f'<span style="color:{group.color};font-size:1.3em">■</span>')
    row = w.HBox([swatch, box, remove])
    row.add_class("gradlab-run-row")
    return row
