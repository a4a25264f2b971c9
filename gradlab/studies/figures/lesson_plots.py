"""The lessons' figures by one name, `gradlab.lessons.lesson_plots`; each lives in a module named for it.

    replicas:    replica_schematic.draw_replicas                      (lesson 13)
    update time: update_time.plot_update_ms                           (lesson 05)
                 update_time.plot_fused_saving                        (lesson 05)
                 update_time.plot_call_timeline                       (lesson 05)
    loop peaks:  loop_peaks.plot_loop_peaks                           (lesson 05)
    weights:     example_weights.plot_example_weights                 (lesson 01)
                 example_weights.plot_miss_against_imbalance          (lesson 15)
    hub, ring:   hub_ring.plot_hub_vs_ring                            (lesson 02)
    rates:       applied_rates.plot_applied_rates                     (lesson 06)
    spacings:    spacings_to_reference.plot_spacings_to_reference     (lesson 10)
    fit steps:   fit_steps.fit_step_spans                             (lesson 10)
                 fit_steps.plot_fit_steps                             (lesson 10)

Like `gradlab.studies.figures.plots`, every function returns a Figure already closed in pyplot, so a
notebook cell ending with the call shows it exactly once.
"""
from .applied_rates import plot_applied_rates
from .example_weights import plot_example_weights, plot_miss_against_imbalance
from .fit_steps import fit_step_spans, plot_fit_steps
from .hub_ring import plot_hub_vs_ring
from .loop_peaks import plot_loop_peaks
from .replica_schematic import draw_replicas
from .spacings_to_reference import plot_spacings_to_reference
from .update_time import plot_call_timeline, plot_fused_saving, plot_update_ms

__all__ = ["draw_replicas", "fit_step_spans", "plot_applied_rates", "plot_call_timeline", "plot_example_weights",
           "plot_fit_steps", "plot_fused_saving", "plot_hub_vs_ring", "plot_loop_peaks", "plot_miss_against_imbalance",
           "plot_spacings_to_reference", "plot_update_ms"]
