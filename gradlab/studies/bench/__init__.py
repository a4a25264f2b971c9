"""Benchmarks, one command with a sub-command each: `step` timed and its memory, `fit` timed, `fit`'s memory."""
