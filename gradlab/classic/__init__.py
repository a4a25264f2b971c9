"""The TF1 graphs of the three founding texts (towers, host averaging, variable accumulation),
and how to draw them.

    tower_graph.build_towers, host_graph.build_host_average,
    accumulation_graph.build_accumulation    -> a ClassicGraph (classic_graph): run_update, weights
    model                                       the MLP, loss and optimizer they share
    draw.draw_graph                             matplotlib: scopes (groups) placed by layout (pure)
"""
