"""The authors' checks of lesson 15 (not part of the lesson): they re-check every number the prose states.

The lesson's last cell runs this file in its own namespace (`%run -i checks/15.py`), so a re-run whose numbers
disagree with the text fails there. nbval also pins every printed number.
"""
# Keras's plain mirrored fit: the uneven last batch, the mean of means, the formula for the miss
assert last == [6, 5] and verdict(mirrored.get_weights(), large.get_weights()).startswith("miss")
assert f"{last_miss:.1%}" == "7.3%"  # 01's miss, the last update's
# "Why 7.3%?": the formula (R = 2: eta (n_0 - n_1) / (2B) (g_0 - g_1), here eta / 22) is checked against a measured
# update in the token section ("The token section below checks this formula"), with D_r in place of n_r
assert (last[0] - last[1], 2 * sum(last)) == (1, 22)
# "Its length, over the length of the large batch's step, is the 7.3%": the formula's gap eta / 22 (g_0 - g_1), from the
# weights after 600 digits, over the large batch's step eta g_B on the last 11 rows
_net = mlp()
_net.set_weights(large_600.get_weights())
def _mean_grad(lo, hi):
    with tf.GradientTape() as _tape:
        _loss = make_loss()(y[lo:hi], _net(x[lo:hi]))
    return np.concatenate([np.ravel(g) for g in _tape.gradient(_loss, _net.trainable_variables)])
_g0, _g1, _gB = _mean_grad(600, 606), _mean_grad(606, 611), _mean_grad(600, 611)
_formula_miss = np.linalg.norm((_g0 - _g1) / 22) / np.linalg.norm(_gB)
assert f"{_formula_miss:.1%}" == f"{last_miss:.1%}" == "7.3%" and abs(_formula_miss - last_miss) < 5e-4, (_formula_miss, last_miss)
# the lesson's formula cell prints the same share (the prose: "the gap is 7.3% of the large batch's step")
assert abs(gap / large_step - _formula_miss) < 1e-6 and f"{gap / large_step:.1%}" == "7.3%", (gap, large_step)
# "Does it matter?": the mean loss on the 611 digits after the epoch, "1.71563 under mirrored fit, 1.71923 under the
# large batch: 0.2% apart, here in fit's favour" (the two models after their epochs; only the last update differs)
assert {k: f"{v:.5f}" for k, v in epoch_loss.items()} == {"mirrored fit": "1.71563", "the large batch": "1.71923"}, epoch_loss
_apart = (epoch_loss["the large batch"] - epoch_loss["mirrored fit"]) / epoch_loss["the large batch"]
assert f"{_apart:.1%}" == "0.2%" and _apart > 0, epoch_loss
assert verdict(mirrored_600.get_weights(), large_600.get_weights()).startswith("exact")  # "one update in eleven"
# the crash's cause: "that build averages the replicas' input shards into one example batch
# (strategy.reduce("MEAN", data))": Keras's TensorFlow trainer, _maybe_symbolic_build, at the linked version
import inspect as _inspect_build
from keras.src.backend.tensorflow.trainer import TensorFlowTrainer as _TFTrainer
_build = " ".join(_inspect_build.getsource(_TFTrainer._maybe_symbolic_build).split())
assert 'self.distribute_strategy.reduce( "MEAN", maybe_distributed_data_batch' in _build, _build
# the figure (gradlab's plot_shard_weights) draws the last batch's shards: 1/12 and 1/10 against 1/11
assert gl.lessons.plot_shard_weights(last).axes[0].patches[0].get_height() == 1 / 12  # a row of shard 0: 1 / (R n_0)
# the empty shard (601 digits, [1, 0]): its mean is 0, one of two means, so the formula's eta/2 g_0, half the update
assert f"{empty_miss:.1%}" == "50.0%" and shards(1) == [1, 0], empty_miss
# the reference is gradlab's plain_fit (lesson 16's): the same weights
assert spacings(gl.lessons.plain_fit(x, y).get_weights(), large.get_weights()) == 0
# every exact route, in spacings (the course's yardstick): within one, so inside ten
_exact = {"600 digits": spacings(mirrored_600.get_weights(), large_600.get_weights()),
          "drop_remainder": spacings(dropped.get_weights(), large_600.get_weights()),
          "one division": spacings(unclipped.inner.get_weights(), large.get_weights()),
          "lesson 10's step against mirrored fit": spacings(as_written.inner.get_weights(), mirrored.get_weights()),
          "TokenStep": token["token step"], "token_step": spacings(by_tokens.inner.get_weights(), token["one device"]),
          "gl.AccumulatingModel on 3": spacings(acc3.get_weights(), path64[-1])}
assert all(0 <= k <= 1 for k in _exact.values()), _exact
# "Dividing once by the all-reduced B is exact, on 611 digits and on the empty shard" (the checker's runs)
assert unclipped_miss.startswith("exact: 1.0 spacings") and checked["one division"]["601 (a shard of 0)"].startswith(
    "exact"), (unclipped_miss, checked)
_lines = [m for r in checked.values() for m in r.values()]
assert len(_lines) == 2 and all(m.startswith("exact") for m in _lines), checked
assert verdict(mirrored_600.get_weights(), large_600.get_weights()).startswith("exact")  # "both controls are exact"
assert verdict(dropped.get_weights(), large_600.get_weights()).startswith("exact")

# TensorFlow's split: ceil(B / R) rows a replica until they run out; drop_remainder keeps the split
def _tf_rule(rows, R):  # the rule the prose states (lesson 13 states it too): ceil(rows / R) to each replica in turn
    per = -(-rows // R)
    return [max(0, min(per, rows - r * per)) for r in range(R)]
for _rows, _R in ((11, 2), (11, 3), (11, 4), (11, 5), (11, 6), (4, 3), (1, 2), (64, 3), (60, 2), (30, 4)):  # the measured shards
    assert _tf_rule(_rows, _R) == shards(_rows, strategies[_R]), (_rows, _R, shards(_rows, strategies[_R]))
assert shards(11, strategies[4]) == [3, 3, 3, 2] and shards(11, strategies[6]) == [2, 2, 2, 2, 2, 1]
assert shards(11, strategies[3]) == [4, 4, 3] and shards(1) == [1, 0]
assert shards(11, strategies[5]) == [3, 3, 3, 2, 0]  # Answer 1: "R = 5 leaves a shard empty, [3, 3, 3, 2, 0] (printed there)"
assert shards(30, strategies[4]) == [8, 8, 8, 6]  # lesson 13 quotes it against the even split's 8, 8, 7, 7
assert shards(4, strategies[3]) == [2, 2, 0] and shards(4, strategies[3], drop_remainder=True) == [2, 2, 0]
# Problem 1 (pencil, from the printed splits): the heaviest row of the last batch weighs 11 / (R n_r) times its due
assert [f"{max(11 / (R * n) for n in shards(11, strategies[R])):.3f}" for R in (2, 3, 4, 6)] == [
    "1.100", "1.222", "1.375", "1.833"]
# "At R = 11 each shard holds one row: exact. Beyond it the extra shards are empty": the stated rule, ceil(11 / R) a replica
# Answer 1: "The rule leaves a shard empty at R = 5, [3, 3, 3, 2, 0], and from R = 7, [2, 2, 2, 2, 2, 1, 0]: the
# weights add to only 4/5, then 6/R, and the lone row weighs 11/R its due" (through R = 10)
assert _tf_rule(11, 5) == [3, 3, 3, 2, 0] and _tf_rule(11, 7) == [2, 2, 2, 2, 2, 1, 0]
assert [_R for _R in range(1, 11) if 0 in _tf_rule(11, _R)] == [5, 7, 8, 9, 10]
assert all(sum(1 for n in _tf_rule(11, _R) if n) == 6 and min(n for n in _tf_rule(11, _R) if n) == 1
           for _R in range(7, 11))
assert _tf_rule(11, 11) == [1] * 11 and all(_tf_rule(11, _R) == [1] * 11 + [0] * (_R - 11) for _R in (12, 16, 64))
# The practical fix: .batch(60, drop_remainder=True) on 611 digits is the large batch on 600
assert int(dropped.optimizer.iterations.numpy()) == 10 and _exact["drop_remainder"] <= 1, _exact

# (no longer stated in 15's prose; 16's Problem 2) an L2 penalty in model.losses goes to apply over R
# (tf.nn.scale_regularization_loss, as unclipped_step does):
# gradlab's unclipped_step with a penalty, on 2 replicas, is the large batch with that penalty
_penalty = fit_step(with_step(gl.lessons.unclipped_step), 600, reference(600, l2=0.01), l2=0.01)[0]
assert _penalty.startswith("exact"), _penalty
# "tf.nn.compute_average_loss(losses, global_batch_size=B) ...; its default, the shard's rows times R": inside a
# replica of 2, five losses of 1 give 5 / (5 x 2) by default and 5 / 11 with global_batch_size=11
_cal = [float(dist.experimental_local_results(dist.run(lambda: tf.nn.compute_average_loss(tf.ones([5]), **_kw)))[0])
        for _kw in ({}, {"global_batch_size": 11})]
assert abs(_cal[0] - 0.5) < 1e-7 and abs(_cal[1] - 5 / 11) < 1e-7, _cal
# "global_batch_size=tf.cast(B, tf.int32), the all-reduced float32 B cast (it asks for an integer)": in a compiled
# replica step, B all-reduced as float32 over shards of 5 and 6 rows, cast, gives 5 / 11 and 6 / 11; uncast it raises
def _cast_route(v):
    ctx = tf.distribute.get_replica_context()
    n = tf.cast(4 + ctx.replica_id_in_sync_group + 1, tf.float32)  # 5 rows on replica 0, 6 on replica 1
    B = ctx.all_reduce("sum", n)
    return tf.nn.compute_average_loss(tf.ones([tf.cast(n, tf.int32)]), global_batch_size=tf.cast(B, tf.int32))
_cast = [float(v) for v in dist.experimental_local_results(tf.function(lambda: dist.run(_cast_route, args=(0,)))())]
assert np.allclose(_cast, [5 / 11, 6 / 11], atol=1e-7), _cast
try:
    tf.nn.compute_average_loss(tf.ones([5]), global_batch_size=tf.constant(11.0))
    raise AssertionError("a float32 global_batch_size was accepted")
except TypeError as e:
    assert "integer" in str(e)
# "0.20 ms at R = 8 with NCCL's 14 us a step": the start-ups 2 (R - 1) alpha (lesson 14's alpha), printed by the cell
assert alpha == 14e-6 and f"{2 * (8 - 1) * alpha * 1e3:.2f}" == "0.20"
# the printed source is gradlab's StepBase and with_step
assert StepBase is gl.lessons.StepBase and "return step(self, data)" in inspect.getsource(with_step)

# The lesson's given summed_grads does what gradlab's does (16 imports gradlab's): the same loss, rows, gradient
_m = StepBase(mlp(), accum_steps=3, loss_fn=make_loss())  # 10 rows: micro-batches of 4, 3 and 3
_ours, _theirs = summed_grads(_m, x[:10], y[:10]), gl.lessons.summed_grads(_m, x[:10], y[:10])
assert float(_ours[1]) == float(_theirs[1]) == 10 and abs(float(_ours[0]) - float(_theirs[0])) < 1e-5
assert spacings([g.numpy() for g in _ours[2]], [g.numpy() for g in _theirs[2]]) <= 10

# "It costs two all-reduces an update": the row count and apply's, counted in the traced train_step
assert all_reduces_per_update(unclipped, dist, x, y) == 2
# The one-division step: lesson 10's step, mirrored, is mirrored fit (the same 7.3%); divided once by B, the large batch
assert f"{as_written_miss:.1%}" == "7.3%"
assert verdict(as_written.inner.get_weights(), mirrored.get_weights()).startswith("exact")  # "mirrored fit ("exact")"
# the one-division step (the learner's or the solution) is gradlab's unclipped_step without the penalty ("lands on
# gradlab's unclipped_step"); the checks above run gradlab's step with the penalty; where the learner's is used,
# the solution is checked too
assert all(m.startswith("exact") for m in checked["one division"].values()), checked
assert shipped_verdict.startswith("exact") and spacings(unclipped.inner.get_weights(), shipped.inner.get_weights()) <= 10
if one_division_step is not solution_one_division_step:
    check_one_division(solution_one_division_step)
# the token step, the learner's or the solution, passed its checker in the lesson (yours_or_solution); where the
# learner's is used, the solution is checked too
if token_step is not solution_token_step:
    check_token_step(solution_token_step)

# The empty shard: mirrored fit misses by half the last update, the unclipped route is exact
assert abs(empty_miss - 0.5) < 1e-4  # half the large batch's update
assert f"{empty_miss:.0%}" == "50%"
assert float(keras.ops.divide_no_nan(0.0, 0.0)) == 0.0 and np.isnan(float(tf.reduce_mean(tf.zeros([0]))))

# Full batches that R does not divide: fit does not start (the controls' cell); Keras's step misses at every update ("Had
# it started, Keras's step would have missed each update by 2.7% to 5.2%", and the table's row)
assert shards(64, strategies[3]) == [22, 22, 20] and fit_updates == 0 and "AddN" in fit_error
assert len(per_update) == 9 and all(m > 1e-3 for m in per_update), per_update  # every update misses
assert (f"{min(per_update):.1%}", f"{max(per_update):.1%}") == ("2.7%", "5.2%"), per_update  # 01's miss, each
# the lesson uses gradlab's each_update_miss (inside token_misses, and in Going further), StepBase and with_step
# (lesson 16 imports them too)
assert each_update_miss is gl.lessons.each_update_miss and with_step is gl.lessons.with_step
# "gl.AccumulatingModel builds from one shard ... and trains exact": it overrides Keras's private
# _maybe_symbolic_build ( probed in gradlab/_compat/trainer.py) and skips apply's all-reduce through
# _all_reduce_sum_gradients (probed in gradlab/_compat/optimizers.py; lesson 16 counts its one all-reduce)
assert int(acc3.optimizer.iterations.numpy()) == 9 and verdict(acc3.get_weights(), path64[-1]).startswith("exact")
# the one-division step on [22, 22, 20]: "The one-division step stops at the same build as mirrored fit"
assert public_updates == 0 and "AddN" in public_error, public_error
# the given loop, summed_grads, is lesson 10's tf.while_loop: one While op in the traced step, one pass in its body
_spec = (tf.TensorSpec([None, 784]), tf.TensorSpec([None], "int64"))
_traced = tf.function(lambda a, b: summed_grads(_m, a, b)).get_concrete_function(*_spec).graph
assert sum("While" in op.type for op in _traced.get_operations()) == 1, "the loop is not one tf.while_loop"

# Keras's default reduction divides by rows even when given sample_weight; mean_with_sample_weight by the weights
for _red, _want in (("sum_over_batch_size", 60.0), ("mean_with_sample_weight", float(w.sum()))):
    _v = float(keras.losses.SparseCategoricalCrossentropy(True, reduction=_red)(yb, p, sample_weight=w))
    assert abs(weighted_sum / _v - _want) < 1e-3 * _want, (_red, weighted_sum / _v, _want)
assert float(w.sum()) != 60.0  # the two divisors differ, so the test tells them apart
# "A mean per token: every update misses": 600 digits with 1 to 8 tokens each, every batch split [30, 30], and
# mirrored fit "misses every update, by 0.2% to 9.2%"; dividing once by all replicas' tokens is "exact (within one
# spacing of one device)": gradlab's TokenStep, and the Your turn's token_step, within one spacing (_exact above)
token_each = token["mirrored fit"]
# the lesson's own loop (mirrored fit's train_step from path[t] on batch t) is gradlab's each_update_miss: the same
# misses, printed beside each batch's tokens [D_0, D_1]; the range the prose states is read off the lesson's loop
assert len(token_miss) == 10 and max(abs(a - b) for a, b in zip(token_miss, token_each)) < 1e-6, (token_miss, token_each)
assert (f"{min(token_miss):.1%}", f"{max(token_miss):.1%}") == ("0.2%", "9.2%"), token_miss
# "beside each miss prints the formula's, |D_0 - D_1| / 2D |g_0 - g_1| / |g_B|": the formula is each update's miss
# (to float32 rounding), so the spread around the line in the imbalance is |g_0 - g_1| / |g_B| changing
assert len(predicted) == 10 and all(abs(f - m) < 2e-3 * m + 1e-6 for f, m in zip(predicted, token_miss)), (predicted, token_miss)
# "more where the shards' tokens differ more (the figure)": the misses rank with |D_0 - D_1| / D; the least
# and the largest at the least and the largest imbalance ([129, 130], [123, 152])
_imb = np.abs(split[:, 0] - split[:, 1]) / split.sum(1)
_rank = lambda v: np.argsort(np.argsort(v))  # noqa: E731
assert np.corrcoef(_rank(_imb), _rank(np.array(token_miss)))[0, 1] > 0.9
assert np.argmin(token_miss) == np.argmin(_imb) and np.argmax(token_miss) == np.argmax(_imb)
assert split[np.argmin(_imb)].tolist() == [129, 130] and split[np.argmax(_imb)].tolist() == [123, 152]
assert int(split.sum()) == int(tokens[:600].sum()) and list(split[0]) == [int(D0), int(D1)], split[0]
assert spacings(path[-1], token["one device"]) == 0  # "one device's mean per token (path[-1] above)": the checker's
assert (tokens.min(), tokens.max()) == (1, 8) and len(tokens) == len(x), (tokens.min(), tokens.max())
assert len(token_each) == 10 and all(m > 1e-3 for m in token_each), token_each  # every update misses
assert (f"{min(token_each):.1%}", f"{max(token_each):.1%}") == ("0.2%", "9.2%"), token_each  # 01's miss, each
assert shards(60) == [30, 30] and token["uneven batches"] == 10  # all 10 batches' shards differ
assert 0 <= token["token step"] <= 1, token["token step"]
# "the formula above holds with D_r in place of n_r" (the next cell compares it on the first update): the formula's theta
# misses the first update as measured (mirrored fit's first update, from one device's starting weights)
assert abs(token_formula_miss - token_each[0]) < 5e-4 and f"{token_formula_miss:.1%}" == f"{token_each[0]:.1%}", (
    token_formula_miss, token_each[0])
# "against the formula's theta: exact": mirrored fit's first update is the formula's, entry by entry
assert token_formula_verdict.startswith("exact") and spacings(first_mirrored.get_weights(), token_formula) <= 10, (
    token_formula_verdict)
assert D0 != D1 and spacings(start, mlp().get_weights()) == 0  # unequal tokens; the shared start is mlp()'s
# the first update by hand (mirrored fit on the first batch alone) is token_misses' first update: the same miss
assert abs(first_miss - token_each[0]) < 5e-4 and f"{first_miss:.1%}" == f"{token_each[0]:.1%}", (first_miss, token_each[0])

# Going further: Keras's accumulation fails under a strategy, before any update
assert "merge_call" in keras_error
for how in ("defaults", "jit_compile=True"):  # no update, the weights untouched, the merge_call error
    assert accumulation[how][:2] == (0, 0.0) and "merge_call" in accumulation[how][2], accumulation[how]
assert accumulation["run_eagerly=True"][0] == 2 and accumulation["run_eagerly=True"][1] > 0  # 128 / (16 x 4)
assert accumulation["run_eagerly=True"][2] == "none"

# "The other two lines split the first batch unevenly ([22, 22, 20], [6, 5]): fit raises before its first update,
# 0 updates" (Going further: the build adds the first batch's shards); a later uneven batch passes (611 digits trains)
assert shards(11) == [6, 5] and int(runs[11][0].optimizer.iterations.numpy()) == 0 and "AddN" in first_error, first_error
assert "[6,784] != input 1: [5,784]" in first_error and int(mirrored.optimizer.iterations.numpy()) == 11
# the spacings the prose states: "1.0 spacing" for both controls, lesson 10's step against mirrored fit, the
# one-division step (611 and 601) and against unclipped_step, the token step, and Problem 3's 4 micro-batches
_stated = [verdict(mirrored_600.get_weights(), large_600.get_weights()), verdict(dropped.get_weights(), large_600.get_weights()),
           verdict(as_written.inner.get_weights(), mirrored.get_weights()), *checked["one division"].values(), shipped_verdict,
           verdict(by_tokens_4.inner.get_weights(), token["one device"])]
if one_division_step is solution_one_division_step and token_step is solution_token_step:
    _stated.append(verdict(by_tokens.inner.get_weights(), token["one device"]))
    assert all(v == "exact: 1.0 spacings" for v in _stated), _stated
# compute_average_loss on [6, 5], losses of 1, summed over the two replicas: 1.000 with B = 11, 0.183 with 60 (= 11 / 60)
_cal11, _cal60 = (sum(float(tf.nn.compute_average_loss(l, global_batch_size=g)) for l in (six, five)) for g in (11, 60))
assert (f"{_cal11:.3f}", f"{_cal60:.3f}") == ("1.000", "0.183") and abs(_cal60 - 11 / 60) < 1e-7
print("lesson 15: every number the prose states checks out")
