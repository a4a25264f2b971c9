"""Experiments on the engine: data and models, runs, the accuracy table, noise, benchmarks,
multi-worker runs, statistics, the result cache and the lessons' plots."""
