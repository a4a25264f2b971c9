"""`bench_report`: the tables and the headline say what the numbers are, and a missing
number prints as `-`."""
from gradlab.studies.bench import step_report as bench_report


def test_headline_reports_compilation_apart_from_training_memory():
    # The numbers of issue 14: XLA's compilation made fused look 7x hungrier than large_batch.
    rows = {"large_batch": dict(vs_keras=0.25, vs_large_batch=1.0, peak_mb=1.1,
                                peak_vs_large_batch=1.0, compile_mb=20.5),
            "fused": dict(vs_keras=0.31, vs_large_batch=1.82, peak_mb=2.0,
                          peak_vs_large_batch=2.0 / 1.1, compile_mb=144.5)}
    result = {"config": {"model": "mlp", "accum_steps": 10, "micro_batch": 10}, "strategies": rows}
    assert bench_report.headline([result]) == [
        "fused on mlp (N=10, b=10): 3.2x faster than keras, 1.82x the time of large_batch, "
        "1.82x its training memory (2.0 vs 1.1 MB), compiling took 144 MB once (large_batch 20 MB)"]


def test_table_marks_missing_numbers_and_memory_errors():
    row = dict(ms_median=2.0, ms_q25=1.5, ms_q75=2.5, vs_large_batch=None, vs_keras=0.5,
               peak_mb=None, peak_vs_large_batch=None, compile_mb=None, traces=1, retraces=0,
               memory_error="timed out after 600 s")
    config = dict(model="mlp", accum_steps=2, micro_batch=3, batch=6, optimizer="sgd",
                  inputs="numpy", rounds=2, updates=1, warmup=1, gpus=[], cpu_count=2,
                  devices=["CPU:0"], load_average=[0.5, 0.75], tensorflow="2.x", memory=True)
    lines = bench_report.format_bench({"config": config, "strategies": {"fused": row}},
                                      verdict=False).splitlines()
    assert lines[0].startswith("gradlab bench: model mlp, N=2 micro-batches of 3 (effective batch 6)")
    assert "load average 0.5 -> 0.8" in lines[1]
    assert lines[4].split() == ["fused", "2.00", "1.50-2.50", "-", "0.50", "-", "-", "-", "1+0"]
    assert lines[5] == "  fused: memory not measured (timed out after 600 s)"
