"""The cost of communication: the ring all-reduce model, and one measurement of it.

A ring all-reduce over R replicas of a gradient of `nbytes` bytes moves, per replica,

    sent = received = 2 (R - 1) / R * nbytes          (reduce-scatter, then all-gather)

in 2 (R - 1) messages, so with a per-message latency `alpha` (seconds) and a link bandwidth
`beta` (bytes per second) its time is about

    t = alpha * 2 (R - 1) + 2 (R - 1) / R * nbytes / beta .

At a fixed batch B, accumulation decides how often this is paid: once per update (each replica
adds its micro-batches locally, then one all-reduce) or, naively, once per micro-batch
(`accum_steps` times per update). `measure_reduction_schedules` times both on the given
devices, interleaved in rounds, and `extra_all_reduce_ms` reads the cost of one extra
all-reduce from the paired rounds, against the noise of `accum_steps = 1` (where both schedules
run identical code). `measure_all_reduce_ms` times all-reduces alone at several sizes and
`fit_alpha_beta` fits alpha and beta to them. On logical CPU devices an all-reduce is
TensorFlow's CPU collective (copies and adds in memory, thread hand-offs), so these measure this
machine, not a network.

Lesson: notebooks/14-communication.ipynb
"""
import time

import numpy as np
import tensorflow as tf

from ...core import distribute
from ...core.microbatch import check_count


def ring_bytes(nbytes, replicas):
    """Bytes each replica sends (and receives) in one ring all-reduce: `2 (R-1)/R * nbytes`."""
    replicas = check_count("replicas", replicas)
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes!r}")
    return 2 * (replicas - 1) / replicas * nbytes


def ring_time(nbytes, replicas, latency, bandwidth):
    """Seconds for one ring all-reduce: `latency * 2 (R-1) + ring_bytes(nbytes, R) / bandwidth`.

    Args:
        nbytes: bytes of the gradient (all variables together).
        replicas: R.
        latency: alpha, seconds per message (a ring makes 2 (R - 1) steps).
        bandwidth: beta, bytes per second of one link.
    """
    if latency < 0 or bandwidth <= 0:
        raise ValueError(f"latency must be >= 0 and bandwidth > 0, got {latency!r} and {bandwidth!r}")
    return latency * 2 * (check_count("replicas", replicas) - 1) + ring_bytes(nbytes, replicas) / bandwidth


def hierarchical_or_flat(nbytes, nodes, per_node, node_bytes_per_s, network_bytes_per_s, node_step_us=3.4,
                         network_step_us=14.0):
    """A hierarchical all-reduce against flat rings on `nodes` x `per_node` GPUs, and where start-ups tip it.

    Rule (each phase a ring, `ring_time` without latency, phases one after another):
        hierarchical = ring(M, per_node, node link) + ring(M / per_node, nodes, network)
            (reduce-scatter and all-gather inside each node; each GPU's share all-reduced across nodes);
        flat = ring(M / per_node, R = nodes * per_node, network)
            (per_node rings of all R GPUs, each on M / per_node, paced by its network hop).
    Start-ups: hierarchical takes 2 (per_node - 1) node steps and 2 (nodes - 1) network steps; a flat ring takes
    2 (R - 1) steps, each paying the network's step cost if it waits for the slowest hop ("flat"), or, by NCCL's
    count (tuning.cc, a ring all-reduce), 2 nodes steps that cross a node at the network's cost and the rest at
    the node link's ("flat_nccl"). Both times grow linearly in M, so hierarchical wins below
    M* = (flat start-ups - hierarchical start-ups) / (hierarchical ms per byte - flat ms per byte).

    Args:
        nbytes: M, the gradient's bytes.
        nodes, per_node: the nodes, and GPUs in each (one network adapter a GPU).
        node_bytes_per_s, network_bytes_per_s: one link's bandwidth inside a node (NVLink), and across (InfiniBand).
        node_step_us, network_step_us: one ring step's start-up on each (NCCL's 3.4 and 14 µs by default).
    Returns:
        dict: inside_ms, across_ms, hierarchical_ms, flat_ms; flat_node_ms, the longest the node link is busy
        meanwhile in the flat rings (all a GPU sends, at the node link's speed); steps, startups_ms (dicts
        by "hierarchical", "flat" and, for startups_ms, "flat_nccl"); ms_per_gb (by "hierarchical" and "flat");
        crossover_mb, M* in MB (by "flat" and "flat_nccl").

    Lesson: notebooks/14-communication.ipynb (Problem 3)
    """
    nodes, per_node = check_count("nodes", nodes), check_count("per_node", per_node)
    replicas = nodes * per_node
    inside = 1000 * ring_time(nbytes, per_node, 0.0, node_bytes_per_s)
    across = 1000 * ring_time(nbytes / per_node, nodes, 0.0, network_bytes_per_s)
    flat = 1000 * ring_time(nbytes / per_node, replicas, 0.0, network_bytes_per_s)
    steps = {"flat": 2 * (replicas - 1), "hierarchical": 2 * (per_node - 1) + 2 * (nodes - 1)}
    crossing = 2 * nodes  # NCCL's count: the flat ring's steps that cross a node
    startups = {"hierarchical": (2 * (per_node - 1) * node_step_us + 2 * (nodes - 1) * network_step_us) / 1000,
                "flat": steps["flat"] * network_step_us / 1000,
                "flat_nccl": ((steps["flat"] - crossing) * node_step_us + crossing * network_step_us) / 1000}
    per_gb = {"hierarchical": (inside + across) / (nbytes / 1e9), "flat": flat / (nbytes / 1e9)}
    crossover = {k: 1000 * (startups[k] - startups["hierarchical"]) / (per_gb["hierarchical"] - per_gb["flat"])
                 for k in ("flat", "flat_nccl")}
    return dict(inside_ms=inside, across_ms=across, hierarchical_ms=inside + across, flat_ms=flat,
                flat_node_ms=1000 * ring_bytes(nbytes, replicas) / node_bytes_per_s, steps=steps,
                startups_ms=startups, ms_per_gb=per_gb, crossover_mb=crossover)


def alpha_beta_of_line(intercept_ms, slope_ms_per_byte, replicas):
    """`ring_time`'s alpha (µs) and beta (GiB/s) from a line `t = a + b M` fitted to timed all-reduces:

        alpha = a / (2 (R - 1)),      beta = 2 (R - 1) / (R b)

    Element by element, so `a` and `b` may be arrays (one fit per round). No check on `b`'s sign:
    a noisy round may fit a negative slope, and its beta says so.
    """
    steps = 2 * (replicas - 1)
    return 1000 * intercept_ms / steps, steps / replicas / (slope_ms_per_byte / 1000) / 2 ** 30


def measure_reduction_schedules(devices, model_fn, loss_fn, x, y, accum_steps=(1, 2, 4, 8), rounds=15):
    """Time one update's gradients with an all-reduce per update and with one per micro-batch.

    Each replica takes its shard of the fixed batch `(x, y)`, splits it into `n` equal
    micro-batches and adds their gradients, each of the micro-batch's per-example losses summed
    over the whole batch's B (`grad sum_i l_i / B`), so that the all-reduced sum is the large
    batch's mean-loss gradient; `per update` all-reduces the sum
    once after the loop, `per micro-batch` all-reduces every micro-batch's gradient as soon as
    it is computed. Nothing is applied, so the two differ only in their all-reduces.

    Every function is traced first; then each of `rounds` rounds times, for every `accum_steps`
    (in an order rotated by one from round to round), the two schedules back to back as A B B A,
    with A the per-update schedule in even rounds and the per-micro-batch one in odd rounds. A
    round's time of a schedule is the mean of its two runs, so a drift within the four runs and
    the advantage of running first or second fall on both schedules alike, and the two schedules
    of one round can be compared pairwise (`extra_all_reduce_ms`).

    Args:
        devices: the replicas' devices (at least 2), e.g. `tower_devices(2)`.
        model_fn: builds the model (called in the strategy's scope).
        loss_fn: `loss_fn(y, logits)`, one loss per example, e.g. `functools.partial(
            keras.losses.sparse_categorical_crossentropy, from_logits=True)`; each replica sums its
            micro-batch's and divides by the whole batch. Not a Keras `Loss` object: inside a strategy
            its mean is divided by the replicas as well (refused: it returns a scalar).
        x, y: one batch; every replica's shard must split into each `n` of `accum_steps`.
        accum_steps: the micro-batch counts to time.
        rounds: timed rounds after one untimed run of each function (tracing).
    Returns:
        dict with `accum_steps`, `times_ms` (`{"per_update": [[ms of round k] per n], "per_micro_batch":
        ...}`), `per_update_ms`, `per_micro_batch_ms` (median ms per update), `per_update_iqr_ms`,
        `per_micro_batch_iqr_ms` (their 25th and 75th percentiles), `all_reduces` (collectives per
        replica per update in each traced graph: `{"per_update": [...], "per_micro_batch": [...]}`),
        `grad_bytes`, `replicas` and `rounds`.
    """
    devices = list(devices)
    if len(devices) < 2:
        raise ValueError(f"an all-reduce needs at least 2 devices, got {devices!r}")
    accum_steps = [check_count("accum_steps", n) for n in accum_steps]
    rounds = check_count("rounds", rounds)
    replicas, batch = len(devices), len(x)
    if batch % replicas or any((batch // replicas) % n for n in accum_steps):
        raise ValueError(f"a batch of {batch} must split evenly over {replicas} replicas and then "
                         f"into each of accum_steps={accum_steps}")
    dist = distribute.make_distribution(devices)
    with dist.scope():
        model = model_fn()
        model(x[:1])
    shard = batch // replicas
    xs = dist.experimental_distribute_values_from_function(
        lambda ctx: tf.constant(x[ctx.replica_id_in_sync_group * shard:][:shard]))
    ys = dist.experimental_distribute_values_from_function(
        lambda ctx: tf.constant(y[ctx.replica_id_in_sync_group * shard:][:shard]))
    schedules = ("per_update", "per_micro_batch")
    out = {"accum_steps": accum_steps, "all_reduces": {s: [] for s in schedules},
           "grad_bytes": int(sum(np.prod(v.shape) * np.dtype(v.dtype).itemsize for v in model.trainable_variables)),
           "replicas": replicas, "rounds": rounds}
    fns = {}
    for i, n in enumerate(accum_steps):
        for schedule in schedules:
            fn = fns[schedule, i] = _update_fn(dist, model, loss_fn, n, batch, schedule == "per_micro_batch")
            fn(xs, ys)  # trace
            graph = fn.get_concrete_function(xs, ys).graph
            out["all_reduces"][schedule].append(distribute.count_all_reduces(graph) // replicas)
    times = {key: [] for key in fns}
    order = list(range(len(accum_steps)))
    for k in range(rounds):
        for i in order[k % len(order):] + order[:k % len(order)]:  # rotated: no n always first
            a, b = schedules if k % 2 == 0 else schedules[::-1]  # who runs first alternates
            runs = {a: [], b: []}
            for s in (a, b, b, a):  # A B B A: a linear drift and the slot cancel in each mean
                start = time.perf_counter()
                float(fns[s, i](xs, ys))
                runs[s].append(1000 * (time.perf_counter() - start))
            for s in schedules:
                times[s, i].append(float(np.mean(runs[s])))
    out["times_ms"] = {s: [times[s, i] for i in range(len(accum_steps))] for s in schedules}
    for s in schedules:
        out[f"{s}_ms"] = [float(np.median(t)) for t in out["times_ms"][s]]
        out[f"{s}_iqr_ms"] = [[float(q) for q in np.percentile(t, [25, 75])] for t in out["times_ms"][s]]
    return out


def extra_all_reduce_ms(result):
    """What one extra all-reduce costs, read from paired rounds against the noise of identical code.

    In round k the paired difference `d_n[k] = t_every[k] - t_once[k]` compares the two
    schedules at `accum_steps = n`. At n = 1 they run identical code (one all-reduce each), so
    `d_1` is pure timing noise: it is the null. At n > 1 the naive schedule makes n - 1 more
    all-reduces; that excess is distinguishable at n only when the interquartile range of `d_n`
    lies wholly outside the interquartile range of `d_1`. For every distinguishable n,
    `d_n[k] / (n - 1)` estimates one extra all-reduce's cost; these estimates are pooled.

    Returns:
        dict with `null_ms` (median, q25, q75 of `d_1`), `per_accum_steps` (`{n: {"difference_ms":
        (median, q25, q75) of d_n, "per_all_reduce_ms": the same of d_n / (n - 1),
        "distinguishable": bool}}` for each n > 1), `distinguishable_at` (the n > 1 that are),
        and, pooled over those n, `median_ms`, `iqr_ms` (25th, 75th percentile) and `estimates`
        (their number); `median_ms` and `iqr_ms` are None when no n is distinguishable.
    """
    steps = list(result["accum_steps"])
    if 1 not in steps:
        raise ValueError("the null needs accum_steps = 1 (identical code in both schedules)")
    if all(n == 1 for n in steps):
        raise ValueError("an extra all-reduce needs some accum_steps > 1")

    def diff(i):
        return (np.asarray(result["times_ms"]["per_micro_batch"][i], dtype=float) -
                np.asarray(result["times_ms"]["per_update"][i], dtype=float))

    def summary(values):
        return (float(np.median(values)), *(float(q) for q in np.percentile(values, [25, 75])))

    null = summary(diff(steps.index(1)))
    pooled, per_n = [], {}
    for i, n in enumerate(steps):
        if n == 1:
            continue
        d = diff(i)
        _, q25, q75 = summary(d)
        distinguishable = bool(q25 > null[2] or q75 < null[1])
        per_n[n] = {"difference_ms": summary(d), "per_all_reduce_ms": summary(d / (n - 1)),
                    "distinguishable": distinguishable}
        if distinguishable:
            pooled.extend(d / (n - 1))
    out = {"null_ms": null, "per_accum_steps": per_n,
           "distinguishable_at": [n for n in per_n if per_n[n]["distinguishable"]],
           "estimates": len(pooled), "median_ms": None, "iqr_ms": None}
    if pooled:
        out["median_ms"] = float(np.median(pooled))
        out["iqr_ms"] = tuple(float(q) for q in np.percentile(pooled, [25, 75]))
    return out


def measure_all_reduce_ms(devices, sizes_bytes=(2 ** 16, 2 ** 19, 2 ** 21, 2 ** 23), rounds=15, calls=4):
    """Time one all-reduce (a sum of float32 arrays) of each size on `devices`, alone.

    Each replica holds an array of `size` bytes; one traced function all-reduces it and returns
    its first element, so a call ends with the collective. Every function is traced and run once
    first; then each of `rounds` rounds times every size once, in an order rotated by one from
    round to round (no size always first), as the mean of `calls` back-to-back calls.

    Args:
        devices: the replicas' devices (at least 2), e.g. `tower_devices(2)`.
        sizes_bytes: bytes of each replica's array (multiples of 4).
        rounds: timed rounds.
        calls: calls averaged per size and round.
    Returns:
        dict with `sizes_bytes`, `times_ms` (`[[ms of round k] per size]`), `replicas`, `rounds`.
    """
    devices = list(devices)
    if len(devices) < 2:
        raise ValueError(f"an all-reduce needs at least 2 devices, got {devices!r}")
    sizes = [int(s) for s in sizes_bytes]
    if len(sizes) < 2 or any(s <= 0 or s % 4 for s in sizes):
        raise ValueError(f"sizes_bytes needs 2 or more positive multiples of 4, got {sizes_bytes!r}")
    rounds, calls = check_count("rounds", rounds), check_count("calls", calls)
    dist = distribute.make_distribution(devices)

    def reduce_fn(values):
        def replica_fn(v):
            return tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, v)[:1]
        return dist.run(replica_fn, args=(values,))

    fns, args = [], []
    for size in sizes:
        args.append(dist.experimental_distribute_values_from_function(
            lambda ctx, size=size: tf.fill([size // 4], float(ctx.replica_id_in_sync_group + 1))))
        fns.append(tf.function(reduce_fn))
        [t.numpy() for t in dist.experimental_local_results(fns[-1](args[-1]))]  # trace and warm up
    times = [[] for _ in sizes]
    order = list(range(len(sizes)))
    for k in range(rounds):
        for i in order[k % len(order):] + order[:k % len(order)]:
            start = time.perf_counter()
            for _ in range(calls):
                [t.numpy() for t in dist.experimental_local_results(fns[i](args[i]))]
            times[i].append(1000 * (time.perf_counter() - start) / calls)
    return {"sizes_bytes": sizes, "times_ms": times, "replicas": len(devices), "rounds": rounds}


def fit_alpha_beta(sizes_bytes, times_ms, replicas):
    """Fit `ring_time`'s alpha and beta to timed all-reduces, one least-squares line per round.

    Round k's times `t_k(M)` over the sizes `M` give `t_k = a_k + b_k M`; the ring's
    `t = 2 (R - 1) alpha + 2 (R - 1) / R * M / beta` then reads
    `alpha_k = a_k / (2 (R - 1))` and `beta_k = 2 (R - 1) / R / b_k`. Per-round fits, so the
    spread of alpha and beta is the rounds' spread.

    Args:
        sizes_bytes: the sizes M (bytes), at least 2 distinct.
        times_ms: `[[ms of round k] per size]`, as `measure_all_reduce_ms` returns.
        replicas: R, at least 2.
    Returns:
        dict with `alpha_us` and `beta_gib_per_s`, each (median, q25, q75) over the rounds, and
        `fits` (`[(a_k ms, b_k ms per byte)]`).
    """
    replicas = check_count("replicas", replicas)
    sizes = np.asarray(sizes_bytes, dtype=float)
    times = np.asarray(times_ms, dtype=float)
    if replicas < 2 or len(np.unique(sizes)) < 2 or times.ndim != 2 or times.shape[0] != len(sizes):
        raise ValueError(f"need R >= 2, 2 or more distinct sizes and one row of times per size, got R={replicas}, "
                         f"sizes {sizes.tolist()}, times of shape {times.shape}")
    fits = [tuple(float(c) for c in np.polyfit(sizes, times[:, k], 1)[::-1]) for k in range(times.shape[1])]
    alpha_us, beta_gib = alpha_beta_of_line(*np.array(fits).T, replicas)

    def summary(values):
        return (float(np.median(values)), *(float(q) for q in np.percentile(values, [25, 75])))
    return {"alpha_us": summary(alpha_us), "beta_gib_per_s": summary(beta_gib), "fits": fits}


def _reduced_grads_fn(model, loss_fn, n, batch, per_micro_batch):
    """The replica function: `sum over its micro-batches of grad (sum_i l_i / B)`, all-reduced (a sum over
    replicas) once or after every micro-batch; the result is the large batch's mean-loss gradient."""
    def replica_fn(x_r, y_r):
        ctx = tf.distribute.get_replica_context()
        total = None
        for x_i, y_i in zip(tf.split(x_r, n), tf.split(y_r, n)):
            with tf.GradientTape() as tape:
                losses = tf.convert_to_tensor(loss_fn(y_i, model(x_i, training=True)))
                if losses.shape.rank == 0:  # a mean: a Keras Loss would also divide it by the replicas
                    raise ValueError(f"loss_fn must return one loss per example, got a scalar from {loss_fn!r}")
                loss = tf.reduce_sum(losses) / batch  # the whole batch's B, on every replica
            grads = tape.gradient(loss, model.trainable_variables)
            if per_micro_batch:  # communicate now: one all-reduce per micro-batch
                grads = ctx.all_reduce(tf.distribute.ReduceOp.SUM, grads)
            total = grads if total is None else [a + g for a, g in zip(total, grads)]
        if not per_micro_batch:  # communicate once, after the local sum
            total = ctx.all_reduce(tf.distribute.ReduceOp.SUM, total)
        return total
    return replica_fn


def _update_fn(dist, model, loss_fn, n, batch, per_micro_batch):
    grads_fn = _reduced_grads_fn(model, loss_fn, n, batch, per_micro_batch)

    def replica_fn(x_r, y_r):
        return tf.add_n([tf.reduce_sum(g) for g in grads_fn(x_r, y_r)])  # depends on every reduced gradient

    @tf.function
    def update(xs, ys):
        return dist.reduce(tf.distribute.ReduceOp.MEAN, dist.run(replica_fn, args=(xs, ys)), axis=None)
    return update


def plot_reduction_schedules(result):
    """Milliseconds per update against `accum_steps`, one line per schedule: the medians,
    with bars from the 25th to the 75th percentile (`*_iqr_ms`), so gaps can be read against noise.

    Args:
        result: what `measure_reduction_schedules` returned.
    Returns:
        a matplotlib Figure with 1 Axes.
    """
    import matplotlib.pyplot as plt  # the [lab] extra; the measurement needs only TensorFlow
    steps = result["accum_steps"]
    fig, ax = plt.subplots(figsize=(8.6, 3.8), layout="constrained")
    plt.close(fig)
    for key, label, color in (("per_update_ms", "one all-reduce per update", "tab:blue"),
                              ("per_micro_batch_ms", "one all-reduce per micro-batch", "tab:red")):
        ax.plot(steps, result[key], marker="o", color=color, label=label)
        q25, q75 = np.asarray(result[key.replace("_ms", "_iqr_ms")], dtype=float).T
        ax.errorbar(steps, result[key], yerr=[np.subtract(result[key], q25), q75 - result[key]],
                    fmt="none", ecolor=color, elinewidth=2, alpha=0.6)  # no caps: bars only
    ax.set_xscale("log", base=2)
    ax.set_xticks(steps, [str(n) for n in steps])
    ax.set_ylim(bottom=0)
    ax.set_xlabel("accum_steps (micro-batches per replica per update, fixed batch)")
    ax.set_ylabel(f"ms per update, {result['rounds']} rounds\n(median, bar: 25th-75th percentile)")
    ax.set_title(f"{result['replicas']} replicas, gradient of {result['grad_bytes'] / 2 ** 20:.2f} MiB")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig
