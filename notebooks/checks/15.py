"""The authors' checks of lesson 15 (not part of the lesson): they re-check every number the prose states.

The lesson's last cell runs this file in its own namespace (`%run -i checks/15.py`), so a re-run whose numbers
disagree with the text fails there. nbval also pins every printed number that is not marked as run-dependent;
the MLP's memory peaks are, so the claims about them are checked here as the robust facts the prose draws from them.
"""
# Your step, the miscount, the while loop, the masked tokens: exact where the prose says exact
assert max_abs_diff(mine.inner.get_weights(), large.get_weights()) < 1e-6 and quarter_miss > 1e-4
assert max_abs_diff(looped.inner.get_weights(), large.get_weights()) < 1e-6 and token_miss < 1e-6
assert python_loop is solution_python_loop or python_loop is my_python_loop  # the checker chose it
assert micro_sum is solution_micro_sum or micro_sum is my_micro_sum
assert abs(float(probe.compute_loss(x11, y11, probe(x11))) - float(tf.reduce_sum(per_row)) / 11) < 1e-6  # L_i = S_i / D_i
assert accumulate is solution_accumulate or accumulate is my_accumulate
assert loop_options(traced(MyWhileLoopModel(fresh(), 4))) == [1]  # "parallel_iterations 1": one at a time
assert autograph_on == (20, 0)  # range(N) over a Python int unrolls with AutoGraph on too
assert quarter_miss > 1e-3  # "every miss here is above 1e-3" (the others are checked below)
assert abs(history["loss"][0] - mine_history["loss"][0]) < 1e-6
assert abs(history["accuracy"][0] - mine_history["accuracy"][0]) < 1e-6  # your step logs compile's accuracy
assert 0.15 < quarter_share < 0.17  # "16% of the last update"
assert even_miss < 1e-6  # "after the ten even batches the weights still match"

# The graphs: 5 MatMuls a micro-batch, unrolled N times or once in the while body; the loop's size is flat
for N in NS:
    assert matmuls["unrolled", N] == (5 * N, 0) and matmuls["while loop", N] == (0, 5), matmuls
# the while loop's node count depends on how its body is written (yours or the solution): flat in N
assert len({nodes["while loop", N] for N in NS}) == 1 and (python_loop is not solution_python_loop or nodes["unrolled", 16] == 1430), nodes
assert all(nodes["unrolled", a] < nodes["unrolled", b] for a, b in zip(NS, NS[1:])), nodes

# The MLP's peaks in gradients: the loop holds about 2 whatever N, the unrolled step about N. The BFC allocator may
# count a chunk up to twice its tensor (lesson 09), so a reading of the loop's two gradients moves up to 4 between
# runs (a clean-clone CI run read 3.99 at N = 8; the stored run 2.0 at N = 16)
held = {key: value / grad for key, value in peak.items()}
assert all(1 < held["while loop", N] < 4.2 for N in NS), held
# "accumulation costs memory" on the MLP: the loop, from N = 2, holds more than one pass (1.2 in the stored run)
assert np.mean([held["while loop", N] for N in NS[1:]]) > held["unrolled", 1] + 0.3, held
assert all(abs(held["unrolled", N] - N) <= 1.5 for N in NS[1:]), held
assert held["unrolled", 16] > 4 * held["while loop", 16], held
assert round(outputs / grad, 1) == 0.1  # "the layers' outputs are 0.1 gradients"
# 4,000 rows: the activations outweigh a gradient, and the loop at N = 4 holds well under one pass (0.35x to 0.56x in five runs)
assert big["unrolled", 1] > 4 and big["while loop", 4] < 0.7 * big["unrolled", 1], big
# "The rule predicts (11.9 - 1)/4 + 2 ~ 4.7" from the stored run's one pass, 11.9 (activations + one gradient): a quarter
# of the 10.9 gradients of activations, the sum and one gradient, against the stored 5.0. In any run the loop reads near
# the rule or above it (the allocator may count a chunk up to twice its tensor)
assert round(11.9 - 1, 1) == 10.9 and round((11.9 - 1) / 4 + 2, 1) == 4.7
_rule = (big["unrolled", 1] - 1) / 4 + 2
assert 0.8 < big["while loop", 4] / _rule < 2, (big, _rule)

# Dropout: plain fit repeats itself exactly; your step and AccumulatingModel draw other masks, and land about as far
# from plain fit as plain fit with other masks does ("far, about as far as other masks"; all seeded, so fixed)
drop_miss = {name: max_abs_diff(w, drop_large.get_weights()) for name, w in drop_w.items()}
drop_share = {name: share_of(w, drop_large.get_weights(), dropped().get_weights()) for name, w in drop_w.items()}
assert drop_miss["plain fit again"] == 0, drop_miss
assert 0.55 < drop_share["your while loop"] < 0.63 and 0.57 < drop_share["AccumulatingModel"] < 0.65, drop_share
assert 0.59 < drop_share["plain fit, other masks"] < 0.67, drop_share  # "4.2e-02, 63%"
for name in ("your while loop", "AccumulatingModel"):  # no farther than another draw of the masks
    assert 1e-2 < drop_miss[name] <= drop_miss["plain fit, other masks"], drop_miss

# The two library ways
assert abs(mine_history["loss"][0] - acc_history["loss"][0]) < 1e-6
assert history["accuracy"][0] == acc_history["accuracy"][0]  # AccumulatingModel logs the large batch's accuracy
assert max_abs_diff(acc.get_weights(), large.get_weights()) < 1e-6
assert int(keras_acc.optimizer.iterations) == 10 and applies == 41 and waiting == 1
assert max_abs_diff(keras_acc.get_weights(), large600.get_weights()) < 1e-6
assert max_abs_diff(keras_acc.get_weights(), large.get_weights()) > 1e-2

# Masked tokens
assert seq_miss["Keras accumulation"] > 1e-3 and seq_miss["AccumulatingModel"] < 1e-6
assert seq_miss["your train_step"] > 1e-3 and yours_vs_keras < 1e-6
assert yours_vs_keras == 0  # "exactly 0 from each other": 8/32 and 1/4 are powers of two, the same bits
assert token_count is solution_token_count or token_count is my_token_count
assert abs(token_history["loss"][0] - seq_logs["large batch"]) < 1e-6  # "logging the large batch's 1.609289"

# The problems' solutions
assert max_abs_diff(mine16.inner.get_weights(), large.get_weights()) < 1e-6 and sizes.count(0) == 5
assert all(d < 1e-6 for d in weighted_diff.values()) and class_moved > 1e-3
assert abs(weighted_logs["sample_weight=w"][1] - 2.197235) < 1e-6
assert by_sum["D_i = rows"] > 1e-3 and by_sum["D_i = summed weights"] < 1e-6, by_sum
assert l2_diff < 1e-6 and abs(l2_logs["your train_step"] - l2_logs["large batch"]) < 1e-6

# lesson 01's yardstick on the digits: right steps land 3.0e-08 to 6.0e-08 from plain fit, exactly one and two gaps
# between neighbouring float32 numbers at the largest weight, 0.424 (np.spacing: 2^-25 = 3.0e-08), under two of 01's
# spacings (eps x 0.424 = 5.1e-08, the gap's upper bound); the checks' 1e-6 is about 20 spacings
_W = max(float(np.abs(w).max()) for w in large.get_weights())
_spacing = float(np.finfo(np.float32).eps) * _W
_gap = float(np.spacing(np.float32(_W)))
assert f"{_W:.3f}" == "0.424" and f"{_spacing:.1e}" == "5.1e-08" and round(1e-6 / _spacing) == 20, _W
assert _gap == 2.0**-25 and f"{_gap:.1e}" == "3.0e-08" and _gap <= _spacing, _gap
_right = [max_abs_diff(m.get_weights(), large.get_weights()) for m in (mine.inner, looped.inner, acc, mine16.inner)]
_right += [even_miss, max_abs_diff(keras_acc.get_weights(), large600.get_weights()), *weighted_diff.values(),
           by_sum["D_i = summed weights"], l2_diff]
assert max(_right) < 2 * _spacing and [f"{min(_right):.1e}", f"{max(_right):.1e}"] == ["3.0e-08", "6.0e-08"], _right
assert [round(v / _gap, 2) for v in (min(_right), max(_right))] == [1.0, 2.0], _right  # "one and two gaps"
assert round(max_abs_diff(mine.inner.get_weights(), large.get_weights()) / _gap, 2) == 1.0  # "one float32 gap, 2^-25"
