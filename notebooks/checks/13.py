"""The authors' checks of lesson 13 (not part of the lesson): they re-check every number the prose states.

The lesson's last cell runs this file in its own namespace (`%run -i checks/13.py`), so a re-run whose numbers
disagree with the text fails there. nbval also pins every printed number.
"""
# Keras's plain mirrored fit: the uneven last batch, the mean of means, the formula for the miss
assert last == [6, 5] and misses["mirrored fit"] > 1e-4 and mirrored600 < 1e-6
assert f"{misses['mirrored fit']:.1e}" == "8.8e-04" and f"{mirrored600:.1e}" == "3.0e-08"
assert formula_gap < 1e-6 and f"{last_miss:.1%}" == "7.3%"  # 01's miss, the last update's
# The setup: the exact runs differ from the reference by at most 3.0e-08, one float32 step, 2^-25, at an
# output-layer weight in [0.25, 0.5); the clipped ones by less (1.5e-08)
def _largest(a, b):  # (variable index, |reference weight| there, the difference) at the largest |diff|
    j = max(range(len(a)), key=lambda v: float(np.max(np.abs(a[v] - b[v]))))
    d = np.abs(a[j] - b[j])
    at = np.unravel_index(np.argmax(d), d.shape)
    return j, float(abs(b[j][at])), float(d[at])
assert [w.shape for w in large.get_weights()][2] == (32, 10)  # variable 2: the output layer's kernel
for _a, _b in ((summed.model.inner.get_weights(), large.get_weights()),
               (unclipped.model.inner.get_weights(), large.get_weights()),
               (dropped.get_weights(), large600.get_weights()),
               (keras600.get_weights(), large600.get_weights())):
    _j, _w, _d = _largest(_a, _b)
    assert _j == 2 and 0.25 <= _w < 0.5 and _d == 2.0 ** -25, (_j, _w, _d)
assert f"{2.0 ** -25:.1e}" == "3.0e-08" and mirrored600 == 2.0 ** -25
# the yardstick (cell 0): one spacing at the largest weight, 0.40, in [0.25, 0.5); at most ten
assert 0.25 <= top < 0.5 and f"{top:.2f}" == "0.40" and mirrored600 / np.spacing(np.float32(top)) == 1.0, top
for _w in (summed.model.inner.get_weights(), unclipped.model.inner.get_weights(), public.model.inner.get_weights()):
    assert 0.25 <= max(float(np.max(np.abs(v))) for v in _w) < 0.5  # the same spacing, 2^-25, for every exact run
_exact = [mirrored600, summed.miss, unclipped.miss, clipped.miss, public.miss, drop_miss, empty["one division"],
          token_miss["divided by all replicas' tokens"], *acc_misses.values()]
assert max(_exact) == 2.0 ** -25 and f"{min(_exact):.1e}" == "1.5e-08", _exact  # "at most 3.0e-08"
assert max(_exact) <= np.spacing(np.float32(top)) < 10 * np.spacing(np.float32(top))  # one spacing: within ten

# TensorFlow's split: ceil(B / R) rows a replica until they run out; drop_remainder keeps the split
def _tf_rule(rows, R):  # lesson 11's tf_rule, which the prose cites: ceil(rows / R) to each replica in turn
    per = -(-rows // R)
    return [max(0, min(per, rows - r * per)) for r in range(R)]
for _rows, _R in ((11, 2), (11, 3), (11, 4), (11, 6), (4, 3), (1, 2), (64, 3), (60, 2)):  # against the measured shards
    assert _tf_rule(_rows, _R) == shards(_rows, strategies[_R]), (_rows, _R, shards(_rows, strategies[_R]))
assert shards(11, strategies[4]) == [3, 3, 3, 2] and shards(11, strategies[6]) == [2, 2, 2, 2, 2, 1]
assert shards(11, strategies[3]) == [4, 4, 3] and shards(1) == [1, 0]
assert shards(4, strategies[3]) == [2, 2, 0] and shards(4, strategies[3], drop_remainder=True) == [2, 2, 0]
# The practical fix (the body's first run): .batch(60, drop_remainder=True) on 611 digits is the large batch on 600
assert int(dropped.optimizer.iterations.numpy()) == 10 and f"{drop_miss:.1e}" == "3.0e-08", drop_miss

# Full batches that R does not divide: fit does not start; Keras's step misses at every update
assert shards(64, strategies[3]) == [22, 22, 20] and fit_updates == 0 and "AddN" in fit_error
assert len(per_update) == 9 and all(m > 1e-3 for m in per_update), per_update  # every update misses
assert (f"{min(per_update):.1%}", f"{max(per_update):.1%}") == ("2.7%", "5.2%"), per_update  # 01's miss, each
# "gl.AccumulatingModel builds from one replica's shard instead, so it starts, makes the 9 updates and is exact (3.0e-08)"
_acc3_miss = max_abs_diff(acc3.get_weights(), path64[-1])
assert int(acc3.optimizer.iterations.numpy()) == 9 and _acc3_miss < 1e-6 and f"{_acc3_miss:.1e}" == "3.0e-08", _acc3_miss


# Your step: the mean of means as written; divided by the global B, the large batch; it clips sum / B, the mean
assert same_as_keras < 1e-6 and as_written.miss > 1e-4 and summed.miss < 1e-6 and f"{as_written_miss:.1%}" == "7.3%"
assert abs(summed.loss - large.history.history["loss"][0]) < 1e-6
assert abs(2 * as_written.loss - summed.loss) < 1e-5 and f"{as_written.loss:.6f}" == "1.041047"  # half the loss
assert f"{summed.loss:.6f}" == f"{large.history.history['loss'][0]:.6f}" == "2.082094"  # gradlab's route and the large batch
assert clipped.miss < 1e-6  # gradlab's route: apply clips the all-reduced sum
assert public.miss < 1e-6 and f"{public.miss:.1e}" == "1.5e-08" and reduces["clipped, two all-reduces"][0] == 2  # by hand
check_clip(clipped_step)  # the hand clip (the learner's or the solution): clipped, a shard of 0 included
if clipped_step is not solution_clipped_step:
    check_clip(solution_clipped_step)
check_unclipped(unclipped_step)  # the unclipped route (the learner's or the solution): the large batch, an empty shard included
if unclipped_step is not solution_unclipped_step:
    check_unclipped(solution_unclipped_step)
assert keras_clip > 1e-3  # mirrored fit clips each replica's part, even batches
assert f'{keras_plain.history.history["loss"][0]:.6f}' == "2.082094"  # Keras undoes its 1/R in the log
assert clip_acts == 10 and len(clip_misses) == 10 and all(m > 1e-3 for m in clip_misses), clip_misses  # every update
assert (f"{min(clip_misses):.1%}", f"{max(clip_misses):.1%}") == ("48.9%", "74.8%"), clip_misses  # 01's miss, each update
assert max_abs_diff(clip_ref.get_weights(), large.get_weights()) > 1e-2  # clipping acts on 611: the test is not vacuous
assert list(divided_by.values()) == [1, 2, 2], divided_by  # what Keras divides by R beyond lesson 11's Loss objects

def check_passthrough(f):  # the pairs pass through; nested or overlapping entries and an error leave no trace
    opt, pairs = keras.optimizers.SGD(0.1), [(tf.ones([2]), "v")]
    with f(opt):
        with f(opt):  # a second replica's entry
            assert opt._all_reduce_sum_gradients(pairs)[0][0] is pairs[0][0]
        assert opt._all_reduce_sum_gradients(pairs)[0][0] is pairs[0][0]
    first, second = f(opt), f(opt)  # as MirroredStrategy's threads do: replica 0 enters, replica 1, 0 exits
    first.__enter__(), second.__enter__(), first.__exit__(None, None, None)
    assert opt._all_reduce_sum_gradients(pairs)[0][0] is pairs[0][0], "it ends while replica 1 is inside"
    second.__exit__(None, None, None)
    assert "_all_reduce_sum_gradients" not in vars(opt), "overlapping entries leave the pass-through on"
    try:
        with f(opt):
            raise KeyError("inside")
    except KeyError:
        pass
    assert "_all_reduce_sum_gradients" not in vars(opt), "the optimizer keeps the pass-through after exit"


check_passthrough(passthrough)  # the given pass-through: pairs pass, nothing stays
for _run in (summed, clipped):  # after a fit by gradlab's route (traced, replicas' entries overlap) nothing stays on it
    assert "_all_reduce_sum_gradients" not in vars(_run.model.optimizer), "pass-through left on the optimizer"
assert not open_entries, open_entries  # the pass-through's count of open entries is back to empty
assert all(r.miss < 1e-6 for r in one_reduce.values()), one_reduce  # gradlab's route: every goal

# One all-reduce per update: the counts, gradlab's
assert reduces == {"mirrored fit": (1, 101_800), "unclipped, one division": (2, 101_804),
                   "gradlab: one all-reduce": (1, 101_808), "clipped, two all-reduces": (2, 203_604)}, reduces  # the bytes: 4 x 25,450 weights, + 4 per scalar
assert 4 * keras_plain.count_params() == 101_800
assert gl_counts == {name: count for name, (count, _) in reduces.items()}, gl_counts  # gradlab's counter agrees
assert acc_reduces == 1 and unclipped.miss < 1e-6
# gradlab's accumulation, mirrored: the large batch clipped, unclipped and with an empty shard (the body's three runs)
assert all(m < 1e-6 for m in acc_misses.values()), acc_misses
assert [f"{m:.1e}" for m in acc_misses.values()] == ["1.5e-08", "3.0e-08", "3.0e-08"], acc_misses

# The empty shard: mirrored fit misses by half the last update, the unclipped route is exact
assert abs(empty["mirrored fit"] - 0.5) < 1e-4 and empty["one division"] < 1e-6  # half the large batch's update
assert float(keras.ops.divide_no_nan(0.0, 0.0)) == 0.0 and np.isnan(float(tf.reduce_mean(tf.zeros([0]))))

# The problems (TensorFlow's split of 11 rows on 2, 3, 4, 6 replicas; 2: ImageNet)
assert f"{miss605:.1f}" == "3.4" and f"{gap_ratio:.2f}" == "1.55" and f"{2.2 * gap_ratio:.1f}" == "3.4"
assert [f"{max(11 / (R * n) for n in shards(11, strategies[R])):.3f}" for R in (2, 3, 4, 6)] == [
    "1.100", "1.222", "1.375", "1.833"]
assert imagenet_last == 143 and imagenet_shards == [18] * 7 + [17]  # problem 2
assert f"{imagenet_last / (8 * min(imagenet_shards)):.3f}" == "1.051" and -(-1_281_167 // 256) == 5005
# its cost (answer 3): mirrored fit minus the large batch is eta 7/1144 (g7 - the other seven's mean), against 1/22
assert abs(prefactor - 7 / 1144) < 1e-15 and f"{prefactor:.2%}" == "0.61%" and f"{1 / 22:.1%}" == "4.5%"
assert f"{last_miss * prefactor * 22:.2%}" == "0.98%" and estimate == last_miss * prefactor * 22
# scaled by the shards' noise, sqrt(1/17 + 1/126) against sqrt(1/6 + 1/5): 0.43; where noise dominates the update,
# it shortens too, by sqrt(11 / 143): 0.42% to 1.5% (the Summary gives the range, an estimate)
assert f"{gap_scale:.2f}" == "0.43" and f"{estimate * gap_scale:.2%}" == "0.42%"
assert f"{estimate * gap_scale * np.sqrt(143 / 11):.1%}" == "1.5%"
assert f"{formula_gap:.1e}" == "5.7e-08"  # answer 1: the formula gives the miss to rounding
assert formula_gap < 2 * np.spacing(np.float32(top))  # "under two spacings at the largest weight": within ten

# Problem 3: Keras's accumulation fails under a strategy, before any update (answer 3)
assert "merge_call" in keras_error
for how in ("defaults", "jit_compile=True"):  # no update, the weights untouched, the merge_call error
    assert accumulation[how][:2] == (0, 0.0) and "merge_call" in accumulation[how][2], accumulation[how]
assert accumulation["run_eagerly=True"][0] == 2 and accumulation["run_eagerly=True"][1] > 0  # 128 / (16 x 4)
assert accumulation["run_eagerly=True"][2] == "none"

# A mean per token (the body): mirrored fit misses on equal shards; dividing by all replicas' tokens does not
assert token_miss["mirrored fit"] > 1e-4 and token_miss["divided by all replicas' tokens"] < 1e-6, token_miss
assert [f"{m:.1e}" for m in token_miss.values()] == ["3.0e-03", "3.0e-08"], token_miss
assert len(token_misses) == 10 and all(m > 1e-3 for m in token_misses), token_misses  # every update misses
assert (f"{min(token_misses):.1%}", f"{max(token_misses):.1%}") == ("0.2%", "9.2%"), token_misses  # 01's miss, each
assert shards(60) == [30, 30] and (shard_tokens[:, 0] != shard_tokens[:, 1]).all()  # all 10 batches' shards differ
# Keras 3.15's Dropout under MirroredStrategy: both replicas start from an equal seed and advance alike, so the
# two shards' masks agree entry for entry at both steps ("100.0%"); a Keras that seeds replicas apart fails here
assert (first == second).all() and 0.4 < first.mean() < 0.6, (first.mean(), (first == second).mean())
assert (first2 == second2).all() and 0.4 < (first == first2).mean() < 0.6  # step 2: a new mask, equal on both

# The empty shard in the Summary's table: half the last update
assert f"{empty['mirrored fit']:.0%}" == "50%"

print("lesson 13: every number the prose states checks out")
