"""Experiments on the engine; here what they share (data, models, a strategy from names, the cache, statistics, memory), below them runs/, bench/, distributed/ and figures/."""
