"""The two faces on the engine: `make_strategy(...).step(x, y)` and `AccumulatingModel.fit`."""
