"""Runs and what is built on them: a run's config, loop and result, the accuracy table, the reproduction, noise, the pitfalls."""
