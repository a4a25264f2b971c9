"""More than one process or replica: loopback clusters of workers, multi-worker runs, the cost of communication."""
