"""The authors' checks of lesson 13 (not part of the lesson): every number the prose states, re-checked
against the names the notebook's run left behind (`%run -i` from its last cell). They fail loudly if a
run disagrees with the text."""
import numpy as np
import tensorflow as tf

import gradlab as gl
from gradlab.lessons import check_batch, distribute, spacings, verdict

# The digits below come from the lesson's solutions; a learner's own local_sums or my_sum_and_count may add in
# another order, so with those only the tolerances are checked
solutions = local_sums is solution_local_sums and sum_and_count is solution_sum_and_count

# From towers to replicas: the copies, the cut of lesson 02's 63 digits, Keras's divisors n_r R
assert len(mirrored_model.trainable_variables) == 4 and len(copies) == 8 and rows_63 == [32, 31]
assert mlp_shape == "784-256-10" and ref.count_params() == 203_530 == n_params  # "a 784-256-10 MLP, 203,530 weights"
assert divisors_63 == ["64", "62"], divisors_63  # Keras's mean loss: n_r R, not B = 63
# Keras's summed gradient is the plain mean of the 2015 tutorial's average_gradients (lesson 02), not 02's
# own towers (which divide once by B): "bit for bit (0 spacings)", and "the sum misses g_B by 0.963%" (printed);
# keras_rel (the miss over |g_B|) guards that the cut and the start did not change
keras_plain = spacings(keras_g, plain)
keras_rel = np.linalg.norm(flat(keras_g) - flat(g_B)) / np.linalg.norm(flat(g_B))
assert keras_plain <= 10 and abs(keras_rel - 0.010) < 5e-4 and rows_63 == [32, 31]
if solutions:
    assert keras_plain == 0 and verdict(keras_g, g_B) == "miss 0.963%", (keras_plain, verdict(keras_g, g_B))


def _plain_mean_miss(start):  # the 32 + 31 plain mean's miss of g_B from `start`, one tape per part, one device
    model = make_model("mlp", seed=0)
    model.set_weights(start)
    def grads(x_, y_):
        with tf.GradientTape() as tape:
            loss = loss_fn(y_, model(x_, training=True))
        return [g.numpy() for g in tape.gradient(loss, model.trainable_variables)]
    halves = [grads(x63[:32], y63[:32]), grads(x63[32:], y63[32:])]
    return verdict([(a + b) / 2 for a, b in zip(*halves)], grads(x63, y63))


# the 0.963% is this start's (make_model's): the same plain mean from another start misses by another amount
assert _plain_mean_miss(ref.get_weights()) == "miss 0.963%"  # ref: make_model's start, never updated

# "as Keras's own apply does: its SGD step is one step on the plain mean ("exact"); a mean over replicas would halve
# it": Keras's SGD(0.1).apply_gradients under dist.run, from the shared start, against one step on the plain mean
assert applied.startswith("exact"), applied
assert all(np.array_equal(w, v) for w, v in zip(ref.get_weights(), start))  # the shared start, set back after


def _mean_reduced(x_r, y_r):  # the same gradients, all-reduced with MEAN instead of SUM: half the plain mean
    with tf.GradientTape() as _t:
        _l = loss_fn(y_r, mirrored_model(x_r, training=True))
    return tf.distribute.get_replica_context().all_reduce("mean", _t.gradient(_l, mirrored_model.trainable_variables))


_halved = [g.numpy() for g in replica0(tf.function(lambda a, b: dist.run(_mean_reduced, args=(a, b)))(*shards_63))]
assert spacings(_halved, [p / 2 for p in plain]) <= 10 and abs(gl.lessons.miss(_halved, plain) - 0.5) < 1e-3
# "a MEAN all-reduce would divide it by R again: 0.500 here, with R = 2": printed under Keras's apply
assert f"{mean_ratio:.3f}" == "0.500", mean_ratio


# Accumulate, then all-reduce once: TensorFlow's shards, measured in c9 (its own input route, 2 and 4 logical devices)
assert shards == [16, 15] == cuts["31 on 2"] and cuts["17 on 2"] == [9, 8] and cuts["30 on 4"] == [8, 8, 8, 6]
# c8/c10: "31 rows become 16 + 15 and a last batch of 17 becomes 9 + 8"; "at 9 rows on 4 replicas: TensorFlow gives
# 3, 3, 3, 0 and gradlab's 3, 2, 2, 2"; "drop_remainder=True with the policy OFF keeps it [the balanced cut]" (one
# printed line, cut_9: drop_remainder=True alone, then with auto-shard OFF too); batch_sizes_for_worker is balanced
assert cuts["9 on 4"] == cut_9["drop_remainder=True"] == [3, 3, 3, 0], (cuts, cut_9)
assert cut_9["and auto-shard OFF"] == [3, 2, 2, 2] == cut_9["gradlab's split_sizes"] == gl.split_sizes(9, 4), cut_9
assert set(cuts) == {"31 on 2", "17 on 2", "30 on 4", "9 on 4"}, cuts
# c14: "MirroredStrategy's own op is a ring on these logical CPUs, NCCL's all-reduce on physical GPUs": TF 2.21's
# MirroredExtended._make_collective_ops_with_fallbacks picks RING when every device is a CPU, else keeps NCCL
from tensorflow.python.distribute import collective_util as _cu, cross_device_ops as _cdo, mirrored_strategy as _ms
assert isinstance(dist.extended._cross_device_ops, _cdo.CollectiveAllReduce)
assert dist.extended._communication_options.implementation == _cu.CommunicationImplementation.RING
import inspect as _insp
_fallbacks = _insp.getsource(_ms.MirroredExtended._make_collective_ops_with_fallbacks)
assert "CommunicationImplementation.NCCL" in _insp.getsource(_ms.MirroredExtended.__init__)  # the default
assert 'all("cpu" in d.lower() for d in self._devices)' in _fallbacks and "CommunicationImplementation.RING" in _fallbacks
from tensorflow.python.data.experimental.ops import distribute as _tfd
assert list(_tfd.batch_sizes_for_worker(9, 1, 4, 0).numpy()) == [3, 2, 2, 2]
# the checks' own statement of the default (legacy) cut, for the pencil problems below: it matches every measured cut
_tf_rule = lambda rows, R: [max(0, min(-(-rows // R), rows - r * -(-rows // R))) for r in range(R)]  # noqa: E731
assert all(_tf_rule(int(k.split()[0]), int(k.split()[2])) == v for k, v in cuts.items() if "," not in k)
assert gl.split_sizes(31, 2) == [16, 15] and gl.split_sizes(17, 2) == [9, 8]
import inspect as _inspect
from gradlab.training import updates as _updates
assert "distribute.shard(" in _inspect.getsource(_updates.StepUpdate.__call__)
assert "split_sizes(" in _inspect.getsource(distribute.shard)
# the hand all-reduce (reduce to device 0, add, copy back): "The two agree bit for bit" ("with two replicas they must")
assert [h[0].device.split("/")[-1] for h in by_hand] == [d.split("/")[-1] for d in devices] and R == 2
assert all(spacings(by_hand[r], library[r]) == 0 for r in range(R)), hand_gap
assert hand_gap == ["exact: 0 spacings, bit for bit"] * R, hand_gap
# c15: "On four they add the parts in other orders ...: on the stored run 18,216 of the 203,530 gradient sums differ.
# Rounding scales with the parts added, not the sum: most (13,980) differ by one step of their own, but where parts of
# both signs cancel to a small sum, by up to 32,768 of its steps, yet at most 8 of its largest part's. ... "exact"
# measures every gap in the largest sum's spacing and allows 10: here the largest gap, at a smaller sum, is 0.5 of it
# (printed "at the largest sum")": one run, hub against ring, the gradient entries alone (the loss sum, about 70, once
# set this yardstick's spacing: it is left out now)
assert [int(p[-1]) for p in own_4] == [8, 8, 8, 7] == _tf_rule(31, 4) and hub_4.size == ring_4.size == n_params
_parts_4 = np.stack([flat(list(p))[:-2] for p in own_4])  # each replica's part of every sum
assert _parts_4.shape == (4, n_params) and hub_4.dtype == ring_4.dtype == np.float32
_differ_4 = int(np.sum(hub_4 != ring_4))
assert _differ_4 == np.count_nonzero(steps_4) and 0 < _differ_4 < n_params // 2, _differ_4
# an oracle for "steps apart" that shares nothing with the lesson's bit ranks: walk with np.nextafter
_walk, _steps, _idx = hub_4.copy(), np.zeros(n_params, np.int64), np.flatnonzero(hub_4 != ring_4)
while _idx.size:
    _walk[_idx] = np.nextafter(_walk[_idx], ring_4[_idx])
    _steps[_idx] += 1
    _idx = _idx[_walk[_idx] != ring_4[_idx]]
assert np.array_equal(_steps, steps_4), "steps apart"
assert np.sum(steps_4 == 1) > _differ_4 / 2, np.sum(steps_4 == 1)  # "most ... by one step of their own"
assert steps_4.max() >= 1000, steps_4.max()  # "up to 32,768 of its steps" (thousands, on the stored run)
_far = steps_4 >= 1000  # "where parts of both signs cancel to a small sum": every such sum
assert np.all((_parts_4[:, _far] > 0).any(0) & (_parts_4[:, _far] < 0).any(0))
assert np.all(np.abs(_parts_4[:, _far]).max(0) > 100 * np.abs(ring_4[_far]))
_top = np.abs(_parts_4).max(0)  # "at most 8 of its largest part's": a few steps, within the ten "exact" allows
assert np.allclose(part_gap, np.abs(hub_4 - ring_4) / np.spacing(_top)) and 1 <= part_gap.max() <= 10, part_gap.max()
_gap_4 = spacings(hub_4, ring_4)  # "the largest gap ... is 0.5 of it": the largest |gap| over the largest |sum|'s spacing
assert 0 < _gap_4 < 1 and verdict(hub_4, ring_4) == f"exact: {gl.lessons.as_spacings(_gap_4)}", _gap_4
assert np.isclose(_gap_4, np.max(np.abs(hub_4 - ring_4)) / np.spacing(np.max(np.abs(ring_4)))), _gap_4
_at = np.argmax(np.abs(hub_4 - ring_4))  # "at a smaller sum": a gap under one spacing cannot sit at the largest sum
assert np.abs(ring_4[_at]) < np.max(np.abs(ring_4)) and np.spacing(ring_4[_at]) < np.spacing(np.max(np.abs(ring_4)))
assert strategies[4].extended._communication_options.implementation == _cu.CommunicationImplementation.RING
# c15: "all_reduce hands its list to one batch_reduce_to (distribute_lib.py#L3621-L3623), and MirroredStrategy picks
# each tensor's route: ReductionToOneDevice for an int32, its all-reduce otherwise (mirrored_strategy.py#L741-L751). A
# list needing both is refused, the printed "must be either all on the host or all on the compute devices" (L791-L798).
# So the rows go as float32, concatenated with the sums into one collective op (cross_device_utils.py#L437-L445; counted
# below), exact to 2^24 = 16,777,216 rows": the TF 2.21 source at those lines, and the error this run printed
from tensorflow.python.distribute import cross_device_utils as _cdu, distribute_lib as _dl
assert float(np.float32(2**24)) == 16_777_216 and float(np.float32(2**24 + 1)) == 2**24  # 2^24 + 1 is not a float32
assert int32_error.endswith("Inputs to batch_reduce_to must be either all on the host or all on the compute "
                             "devices."), int32_error


def _lines(module, first, last):  # the source lines the lesson links, as one string
    return "".join(_insp.getsourcelines(module)[0][first - 1:last])


assert strategies[4].extended._use_merge_call()  # on CPUs (no XLA on GPUs) all_reduce goes through merge_call
if tf.__version__ == "2.21.0":  # the links pin v2.21.0's line numbers; another release moves them
    assert "strategy.extended.batch_reduce_to(" in _lines(_dl, 3621, 3623) and "def batch_all_reduce" in _lines(_dl, 3621, 3621)
    _pick = _lines(_ms, 741, 751)
    assert "dtypes.int32" in _pick and "return cross_device_ops_lib.ReductionToOneDevice()" in _pick
    assert "return self._cross_device_ops" in _pick and "def _get_cross_device_ops" in _lines(_ms, 726, 726)
    _refuse = _lines(_ms, 791, 798)
    assert "def _batch_reduce_to" in _refuse and "is not self._get_cross_device_ops(value)" in _refuse
    assert '"Inputs to batch_reduce_to must be either all on "' in _refuse and '"the host or all on the compute devices."' in _refuse
    _concat = _lines(_cdu, 437, 445)
    assert "flat_tensors = [array_ops.reshape(t, [-1]) for t in pack]" in _concat
    assert "self.all_reduce(" in _concat and "array_ops.concat(flat_tensors, axis=0)" in _concat
# c32: "BatchNormalization normalises each shard alone ...; synchronized=True (Keras docs) pools statistics across replicas"
import keras as _keras
_bn_doc = " ".join(_keras.layers.BatchNormalization.__doc__.split())
assert "synchronizes the global batch statistics (mean and variance) for the layer across all devices" in _bn_doc
assert "each replica uses its own local batch statistics" in _bn_doc
# c13: "gradlab's mirrored runs one at a time in a tf.while_loop (parallel_iterations=1)": its home is Loop(overlap=1)
from gradlab.core.homes import Loop as _Loop
assert isinstance(mirrored[8]._update.home, _Loop) and mirrored[8]._update.home.overlap == 1
# c18: "while tracing, it swaps Keras's private scale_loss_for_distribution for the identity
# (_compat.losses_not_divided_by_replicas)"; "with loss_fn for sum_loss, it gives 0.097 of g_B's length"
assert "losses_not_divided_by_replicas" in _inspect.getsource(_updates.StepUpdate.__init__)
assert f"{mean_swap_ratio:.3f}" == "0.097" and gl.lessons.miss(mean_swap, g_large) > 0.5, mean_swap_ratio
# "about 3/31 = 0.097": six means, each divided by R = 2, over 31 rows
assert accum_steps * R == 6 and f"{3 / 31:.3f}" == "0.097" and abs(mean_swap_ratio - 3 / 31) < 0.01
# yours (or the solution) and the naive loop give g_B and L_B (accum_steps = 3, then 8), within ten spacings
_grads_3, _loss_3 = dist.experimental_local_results(on_replicas(sum_and_count, n=accum_steps)(*shards_31))[0]
assert spacings([g.numpy() for g in _grads_3], g_large) <= 10 and spacings(float(_loss_3), large_loss) <= 10
assert spacings(once_8, g_large) <= 10 and spacings(naive_8, g_large) <= 10
assert all(counts[n] == (1, 1, n) for n in counts)
# "gradlab's mirrored makes one too, and its update is one SGD step on g_B": at every accum_steps, from ref's start
# (printed under the count table: "exact" at every accum_steps)
assert all(spacings(s.model.get_weights(), sgd_on_g_B) <= 10 for s in mirrored.values())
assert all(verdict(s.model.get_weights(), sgd_on_g_B).startswith("exact") for s in mirrored.values())
assert f"{4 * n_params / 2**20:.2f}" == "0.78"  # "the whole gradient (0.78 MiB)"
# "on 02's modelled 25 GB/s link, 261 us against 32.6 us": one gradient over 25 GB/s (a 2-replica ring moves G once),
# eight of them for the naive loop at N = 8
assert f"{link_us:.1f}" == "32.6" and f"{8 * link_us:.0f}" == "261" and counts[8][2] == 8
if solutions:  # the digits the prose states, from the lesson's solutions
    assert all(verdict(g, g_large).startswith("exact: 4.0 spacings") for g in (once_8, naive_8))  # "exact: 4.0 spacings"
    # "rounding only, for both add the same 31 rows' gradients as one tape, in another order": exact, within ten
# the logged loss: "the replicas' parts S_r/B added by dist.reduce("SUM", ...), is the large batch's ("exact")"
assert spacings(logged, np.array(large_losses)) <= 10 and verdict(logged, np.array(large_losses)).startswith("exact")
# "MEAN gives 0.500 of it, dividing by R again": every update's MEAN-reduced loss is the SUM's over R
assert f"{np.mean(logged_mean / np.array(large_losses)):.3f}" == "0.500" and np.allclose(logged_mean * R, logged, rtol=1e-6)

# A short batch: the global_batch_size route
# (before: the mirrored model after the route's three updates; large_before: the large batch's after its three)
assert fixed_b_collectives == 1 and spacings(before, large_before) <= 10
assert verdict(before, large_before).startswith("exact")  # "the large batch ("exact")"
# the global_batch_size route: replica_step hands opt.apply_gradients each replica's sum_i grad S_ri / B and never
# all-reduces them itself (the only collective is apply's), yet lands on the large batch: apply sums
assert fixed_b_collectives == 1 and R == 2
assert short_shards == [9, 8] and f"{step_ratio:.3f}" == "0.548" and abs(step_ratio - 17 / B) < 1e-4
# "0.548 of one device's step on those 17 digits (17/31), pointing the same way (cosine 1.000000; 0.0003% from 17/31
# of it on the stored run)": the steps are read off the weights, so they carry the weights' rounding, far below 0.01%
assert f"{cosine:.6f}" == "1.000000" and direction_miss < 1e-4, (cosine, direction_miss)
assert abs(direction_miss - gl.lessons.miss(fixed_b_move, [17 / B * m for m in large_move])) < 1e-12
# the mirrored model is back at the shared start (your sum and count's cell resets it, so these checks read g_B there)
assert all(np.array_equal(w, v) for w, v in zip(mirrored_model.get_weights(), ref.get_weights()))
# your sum and count on the short batch: the 17 digits' g_B ("length ratio 1.000"), dividing their loss sum by 17
assert short_shards == [9, 8] and _tf_rule(17, R) == short_shards
assert spacings(route_g["your sum and count"], g_17) <= 10
# "By default it [compute_average_loss] divides by n_r R, the shards' plain mean; given global_batch_size=B, by B":
# inside a replica of 2, five losses of 1 give 5 / (5 x 2) by default and 5 / 31 with global_batch_size=31
_cal = [float(dist.experimental_local_results(dist.run(lambda: tf.nn.compute_average_loss(tf.ones([5]), **_kw)))[0])
        for _kw in ({}, {"global_batch_size": B})]
assert abs(_cal[0] - 0.5) < 1e-7 and abs(_cal[1] - 5 / 31) < 1e-7, _cal
# c25's table: the four routes on the 17 digits as 9 + 8, from the shared start. "divides by" is measured per replica
# (S_r over the route's loss; counted routes: sum_r S_r over their loss): the default n_r R ("18 and 16"), B (31), 17.
# The default gives the shards' plain mean: against one tape per shard, (g_9 + g_8) / 2, within ten spacings
_plain_17 = [(a + b) / 2 for a, b in zip(mean_grads(x[:9], y[:9])[1], mean_grads(x[9:17], y[9:17])[1])]
_by = {k: [f"{d:.0f}" for d in v[0]] for k, v in table.items()}
assert _by == {"compute_average_loss, default": ["18", "16"], "global_batch_size=B": ["31", "31"],
               "your sum and count": ["17", "17"], "gradlab's mirrored": ["17"]}, _by
assert all(abs(d - round(d)) < 1e-3 for v in table.values() for d in v[0])
_default = route_g["compute_average_loss, default"]
assert spacings(_default, _plain_17) <= 10, verdict(_default, _plain_17)
route_verdict = {k: v[2] for k, v in table.items()}
assert [f"{v[1]:.3f}" for v in table.values()] == ["1.003", "0.548", "1.000", "1.000"], table
assert [route_verdict[k][:4] for k in table] == ["miss", "miss", "exac", "exac"], route_verdict
assert f"{100 * gl.lessons.miss(_default, g_17):.2f}" == "4.57" == route_verdict["compute_average_loss, default"][5:-1]
assert abs(gl.lessons.miss(route_g["global_batch_size=B"], g_17) - (1 - 17 / B)) < 1e-4
assert route_verdict["global_batch_size=B"] == "miss 45.2%", route_verdict
assert all(spacings(route_g[k], g_17) <= 10 for k in ("your sum and count", "gradlab's mirrored"))
assert route_verdict["gradlab's mirrored"] == "exact: 3.0 spacings", route_verdict  # "(2.0 and 3.0 spacings)"
if solutions:
    assert route_verdict["your sum and count"] == "exact: 2.0 spacings", route_verdict

# Problem 1 (pencil): R = 4, B = 30, accum_steps = 2, on TensorFlow's 8, 8, 8, 6
assert _tf_rule(30, 4) == [8, 8, 8, 6] and gl.split_sizes(8, 2) == [4, 4] and gl.split_sizes(6, 2) == [3, 3]
assert np.allclose([1 / 4 - n / 30 for n in (8, 6)], [-1 / 60, 1 / 20])

# Problem 2 (pencil): B = 4,096 on R = 8, N = 8; the epoch's last batch of 1,000 rows
assert _tf_rule(4096, 8) == [512] * 8 and gl.split_sizes(512, 8) == [64] * 8
assert _tf_rule(1000, 8) == [125] * 8 and gl.split_sizes(125, 8) == [16] * 5 + [15] * 3
assert f"{1000 / 4096:.3f}" == "0.244"  # the global_batch_size route's share of one device's step on those rows

try:  # gradlab's guard: a batch too small to give every replica an example
    check_batch(1, R)
    raise AssertionError("check_batch(1, R) accepted a batch of 1")
except ValueError as e:
    assert "too small for 2 replicas" in str(e)
# c19's op-type list: the traced naive step at N = 8 holds 8 CollectiveReduceV2 ops per replica, as gradlab counts
assert set(reduces) == {"CollectiveReduceV2"} and len(reduces) // R == 8 == distribute.count_all_reduces(naive_graph) // R
# c27/c28: the empty shard. "TensorFlow's default cut can leave a replica none (9 rows on 4: 3, 3, 3, 0)": measured in c9
assert shards_1 == [1, 0] == _tf_rule(1, 2) and cuts["9 on 4"] == [3, 3, 3, 0]
# "Counted rows give the row's gradient; Keras's mean loss gives HALF of it": the empty replica adds 0 and
# replica 0's loss is divided by n_0 R = 2, so Keras's sum is g / R; counted rows are exact
_len = {k: np.linalg.norm(flat(g)) / np.linalg.norm(flat(g_1)) for k, g in one_row_routes.items()}
_keras_1 = "Keras's mean loss"
assert f"{_len[_keras_1]:.3f}" == "0.500" and spacings(one_row_routes[_keras_1], [g / 2 for g in g_1]) <= 10, _len
# "It adds 0 to the sum (printed) ... its [replica 0's] loss sum is divided by n_0 R = 2"
assert keras_1[1] == 0 and keras_1[0] > 0 and f"{divisor_1:.0f}" == "2" and abs(divisor_1 - 2) < 1e-5, (keras_1, divisor_1)
assert f"{_len['counted rows']:.3f}" == "1.000" and verdict(one_row_routes["counted rows"], g_1).startswith("exact"), _len
print("lesson 13: every number the prose states checks out")
