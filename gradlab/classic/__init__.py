"""The TF1 graphs of the three founding texts (towers, host averaging, variable accumulation),
and how to draw them."""
