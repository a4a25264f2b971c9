"""The names the lessons use, in one place: `from gradlab.lessons import load_mnist, plots`.

    from gradlab.lessons import load_mnist, make_model   # first: TensorFlow, quietly
    import gradlab as gl

Importing this module imports TensorFlow with its start-up logs silenced (`quiet`), so a
lesson's outputs stay clean, and turns TF32 off, so a lesson's float32 checks hold on a GPU;
`import gradlab` alone leaves both as the user set them. Each name is imported from its home on first use, so a lesson pays only for what it
uses and a module that moves inside gradlab changes this table, not the notebooks.

Lesson: every notebook in notebooks/ and app/lab.ipynb
"""
import importlib

from ._quiet import quiet

quiet()  # before anything below imports TensorFlow

# The lessons pin float32 updates to about 1e-6 of each other. On Ampere and newer GPUs TensorFlow
# multiplies float32 matrices in TF32 by default, which keeps 10 mantissa bits (errors near 1e-3).
# CPUs are unaffected.
importlib.import_module("tensorflow").config.experimental.enable_tensor_float_32_execution(False)

# name -> (module, attribute); attribute None: the module itself.
_NAMES = {
    # data, models, runs
    "load_mnist": ("gradlab.studies.data", "load_mnist"),
    "make_model": ("gradlab.studies.models", "make_model"),
    "accuracy": ("gradlab.studies.models", "accuracy"),
    "RunConfig": ("gradlab.studies.runs.run_config", "RunConfig"),
    "experiments": ("gradlab.studies.runs.experiments", None),
    "table": ("gradlab.studies.runs.table", None),
    "reproduction": ("gradlab.studies.runs.reproduction", None),
    "noise": ("gradlab.studies.runs.noise", None),
    "two_batch_noise_scale": ("gradlab.studies.runs.two_batch", "two_batch_noise_scale"),
    "curvature_noise_scale": ("gradlab.studies.runs.curvature_noise", "curvature_noise_scale"),
    "pitfalls": ("gradlab.studies.runs.pitfalls", None),
    "moving_average": ("gradlab.studies.stats", "moving_average"),
    "t_quantile": ("gradlab.studies.stats", "t_quantile"),
    "yours_or_solution": ("gradlab.studies.exercise", "yours_or_solution"),
    # the two yardsticks (README): one printed verdict, "exact: k spacings", "miss m" or, rounding-sized
    # past ten spacings, "not exact: k spacings, m eps (rerun in float64)"
    "verdict": ("gradlab.studies.yardstick", "verdict"),
    "spacings": ("gradlab.studies.yardstick", "spacings"),
    "miss": ("gradlab.studies.yardstick", "miss"),
    "as_miss": ("gradlab.studies.yardstick", "as_miss"),
    "as_spacings": ("gradlab.studies.yardstick", "as_spacings"),
    # the update's pieces, as the lessons derive them
    "split_sizes": ("gradlab.core.microbatch", "split_sizes"),
    "offsets": ("gradlab.core.microbatch", "offsets"),
    "weights": ("gradlab.classic.weights", "weights"),
    "check_batch": ("gradlab.core.microbatch", "check_batch"),
    "densify": ("gradlab.core.gradients", "densify"),
    "loss_and_grads": ("gradlab.core.loss_terms", "loss_and_grads"),
    "fused_grads": ("gradlab.core.accumulate", "fused_grads"),
    "host_average": ("gradlab.core.host_average", "host_average"),
    "distribute": ("gradlab.core.distribute", None),
    "gradients_already_reduced": ("gradlab._compat", "gradients_already_reduced"),
    "device_sends": ("gradlab._compat", "device_sends"),
    "probe_line": ("gradlab.doctor", "probe_line"),
    # the TF1 graphs of the founding texts
    "draw": ("gradlab.classic.draw", None),
    "scopes": ("gradlab.classic.scopes", None),
    "tower_graph": ("gradlab.classic.tower_graph", None),
    "host_graph": ("gradlab.classic.host_graph", None),
    "tf1_mlp": ("gradlab.classic.model", "mlp"),  # lesson 02's TF1 MLP, built with get_variable (03, 04 reuse it)
    "accumulation_graph": ("gradlab.classic.accumulation_graph", None),
    # benchmarks, memory, more than one machine
    "run_sweep": ("gradlab.studies.bench.step", "run_sweep"),
    "fit_under_limit": ("gradlab.studies.bench.fit_memory", "fit_under_limit"),
    "measure_memory": ("gradlab.studies.bench.step_memory", "measure_memory"),
    "comm_cost": ("gradlab.studies.distributed.comm_cost", None),
    "free_ports": ("gradlab.studies.distributed.loopback_cluster", "free_ports"),
    "worker_env": ("gradlab.studies.distributed.loopback_cluster", "worker_env"),
    "ring_all_reduce": ("gradlab.studies.distributed.ring", "ring_all_reduce"),
    "memory_budget": ("gradlab.studies.memory_budget", None),
    "trace_memory": ("gradlab.studies.memory_trace", "trace"),
    "recompute": ("gradlab.studies.recompute", None),
    "memory_model": ("gradlab.studies.bench.memory_child", "memory_model"),
    "keras_accumulation": ("gradlab.studies.keras_accumulation", None),
    "all_reduces_per_update": ("gradlab.studies.distributed.fit_collectives", "all_reduces_per_update"),
    "StepBase": ("gradlab.studies.distributed.replica_steps", "StepBase"),
    "UnrolledStep": ("gradlab.studies.distributed.replica_steps", "UnrolledStep"),
    "WhileStep": ("gradlab.studies.distributed.replica_steps", "WhileStep"),
    "with_step": ("gradlab.studies.distributed.replica_steps", "with_step"),
    "weights_path": ("gradlab.studies.distributed.replica_steps", "weights_path"),
    "each_update_miss": ("gradlab.studies.distributed.replica_steps", "each_update_miss"),
    "mlp": ("gradlab.studies.distributed.replica_steps", "mlp"),
    "mean_loss": ("gradlab.studies.distributed.replica_steps", "mean_loss"),
    "plain_fit": ("gradlab.studies.distributed.replica_steps", "plain_fit"),
    "summed_grads": ("gradlab.studies.distributed.replica_steps", "summed_grads"),
    "penalty_grads": ("gradlab.studies.distributed.replica_steps", "penalty_grads"),
    "unclipped_step": ("gradlab.studies.distributed.replica_steps", "unclipped_step"),
    "TokenStep": ("gradlab.studies.distributed.replica_steps", "TokenStep"),
    "token_misses": ("gradlab.studies.distributed.replica_steps", "token_misses"),
    "PerUpdate": ("gradlab.studies.keras_accumulation", "PerUpdate"),
    "lockstep": ("gradlab.studies.runs.lockstep", "lockstep"),
    "run_strategy": ("gradlab.studies.runs.run_loop", "run_strategy"),
    "sample_order": ("gradlab.studies.runs.run_loop", "sample_order"),
    "micro_steps": ("gradlab.studies.keras_accumulation", "micro_steps"),
    "interleaved_ms": ("gradlab.studies.bench.interleaved", "interleaved_ms"),
    "ratio_quartiles": ("gradlab.studies.bench.interleaved", "ratio_quartiles"),
    "side_of_one": ("gradlab.studies.bench.interleaved", "side_of_one"),
    "call_peaks": ("gradlab.studies.bench.call_peaks", "call_peaks"),
    "host_sum_seconds": ("gradlab.studies.bench.host_sum", "host_sum_seconds"),
    "graph_ops": ("gradlab.studies.graph_ops", None),
    # figures
    "plots": ("gradlab.studies.figures.plots", None),
    "lesson_plots": ("gradlab.studies.figures.lesson_plots", None),
    "plot_checkpoint_curve": ("gradlab.studies.figures.selection", "plot_checkpoint_curve"),
    "seed_gaps": ("gradlab.studies.figures.seed_gaps", None),
    "plot_memory": ("gradlab.studies.figures.memory_plots", "plot_memory"),
    "plot_memory_trace": ("gradlab.studies.figures.memory_timeline", "plot_memory_trace"),
    "plot_trace_with_levels": ("gradlab.studies.figures.memory_timeline", "plot_trace_with_levels"),
    "fit_schedule": ("gradlab.studies.figures.fit_schedule", "fit_schedule"),
    "plot_fit_schedule": ("gradlab.studies.figures.fit_schedule", "plot_fit_schedule"),
    "plot_shard_weights": ("gradlab.studies.figures.fit_schedule", "plot_shard_weights"),
    "plot_replica_dataflow": ("gradlab.studies.figures.replica_dataflow", "plot_replica_dataflow"),
    "plot_timeline": ("gradlab.studies.figures.timeline", "plot_timeline"),
    "plot_overlap": ("gradlab.studies.figures.timeline", "plot_overlap"),
    "timeline": ("gradlab.studies.figures.timeline", None),
    "pitfall_plots": ("gradlab.studies.figures.pitfall_plots", None),
    "fit_critical_batch": ("gradlab.studies.figures.noise_scale", "fit_critical_batch"),
    "plot_learning_rate_sweep": ("gradlab.studies.figures.noise_scale", "plot_learning_rate_sweep"),
    "plot_critical_batch": ("gradlab.studies.figures.noise_scale", "plot_critical_batch"),
    "plot_critical_batch_by_target": ("gradlab.studies.figures.noise_scale", "plot_critical_batch_by_target"),
    "plot_time_to_target": ("gradlab.studies.figures.noise_scale", "plot_time_to_target"),
    "plot_progress": ("gradlab.studies.figures.noise_scale", "plot_progress"),
    "plot_noise_scale_tracking": ("gradlab.studies.figures.noise_scale", "plot_noise_scale_tracking"),
    "plot_paired_gaps": ("gradlab.studies.figures.selection", "plot_paired_gaps"),
    "plot_best_of_more": ("gradlab.studies.figures.selection", "plot_best_of_more"),
    "plot_host_timeline": ("gradlab.studies.figures.host_cost", "plot_host_timeline"),
    "host_schedule": ("gradlab.studies.figures.host_cost", "host_schedule"),
    "offload_problem": ("gradlab.studies.host_offload", "offload_problem"),
    "plot_weighting_factors": ("gradlab.studies.figures.weighting", "plot_weighting_factors"),
    "plot_rounding_growth": ("gradlab.studies.figures.rounding_growth", "plot_rounding_growth"),
    "plot_moving_variance": ("gradlab.studies.figures.moving_variance", "plot_moving_variance"),
    "plot_plan_memory": ("gradlab.studies.figures.plan_memory", "plot_plan_memory"),
    "plot_plan_hours": ("gradlab.studies.figures.plan_hours", "plot_plan_hours"),
    # the lab (the [lab] extra)
    "Lab": ("gradlab.lab", "Lab"),
    "run_memory": ("gradlab.lab.run_memory", None),
    "Budget": ("gradlab.lab.budget", "Budget"),
    "plot_budget": ("gradlab.lab.budget", "plot_budget"),
    "picture_budget": ("gradlab.lab.budget", "picture_budget"),
    "Overlap": ("gradlab.lab.overlap", "Overlap"),
    # what lesson 17 reads off the lab: Measure's report, paired gaps, pictures
    "measure_report": ("gradlab.lab.report", "measure_report"),
    "paired_gaps": ("gradlab.lab.report", "paired_gaps"),
    "seed_accuracies": ("gradlab.lab.report", "seed_accuracies"),
    "window_mean": ("gradlab.lab.report", "window_mean"),
    "compare_picture": ("gradlab.lab.report", "compare_picture"),
    "settle": ("gradlab.lab.report", "settle"),
}

__all__ = ["quiet", *_NAMES]


def __getattr__(name):
    try:
        module, attribute = _NAMES[name]
    except KeyError:
        raise AttributeError(f"module 'gradlab.lessons' has no attribute {name!r}") from None
    value = importlib.import_module(module)
    if attribute is not None:
        value = getattr(value, attribute)
    globals()[name] = value  # the next look-up is a plain one
    return value


def __dir__():
    return sorted(__all__)
