"""The interactive lab (needs the `[lab]` extra): settings, a runner, the widget view, figures.

    from gradlab.lab import Lab
    lab = Lab()      # a cell ending with `lab` shows it

    settings   what the lab can run: its settings (one table), limits, configs
    groups     the results: one Group per configuration over its seeds
    runner     trains and records, in a thread, without widgets
    controls   the widgets; view: `Lab`, which joins them to the runner
    curves, families, figures   what the lab draws
    run_memory the allocator peak of a run's settings, in a fresh process
    budget     the memory budget as a widget (`Budget`): sliders and a stacked bar
    overlap    lesson 14's overlap schedule as a widget (`Overlap`): sliders and the timeline
    report     what lesson 17 reads off the lab: Measure's report, paired gaps, pictures

Lesson: notebooks/17-the-lab.ipynb
"""

__all__ = ["Lab"]


def __getattr__(name):
    # Lazy: `python -m gradlab.lab.run_memory` (a fresh process that measures memory) should
    # not import ipywidgets and matplotlib.
    if name == "Lab":
        from .view import Lab
        return Lab
    raise AttributeError(f"module 'gradlab.lab' has no attribute {name!r}")
