"""The authors' checks of lesson 10 (not part of the lesson): they re-check every number the prose states.

The lesson's last cell runs this file in its own namespace (`%run -i checks/10.py`), so a re-run whose numbers
disagree with the text fails there. nbval also pins every printed number that is not marked as run-dependent.
"""
# Chollet's plain step is plain fit's: "0.0e+00 apart"
assert max_abs_diff(plain.inner.get_weights(), large.get_weights()) == 0

# Your step, the miscount, the while loop, the masked tokens: exact where the prose says exact
assert max_abs_diff(mine.inner.get_weights(), large.get_weights()) < 1e-6
assert max_abs_diff(looped.inner.get_weights(), large.get_weights()) < 1e-6
assert python_loop is solution_python_loop or python_loop is my_python_loop  # the checker chose it
assert micro_sum is solution_micro_sum or micro_sum is my_micro_sum
assert abs(float(probe.compute_loss(x11, y11, probe(x11))) - float(tf.reduce_sum(per_row)) / 11) < 1e-6  # L_i = S_i / D_i
assert accumulate is solution_accumulate or accumulate is my_accumulate
assert graph_ops.while_attrs(traced(MyWhileLoopModel(fresh(), 4)), spec) == [1]  # "parallel_iterations 1": one at a time
# "fit traces your step with AutoGraph off": the tf.range loop fails in fit itself (the folded RangeStep cell)
try:
    train(RangeStep(fresh()), keras.optimizers.SGD(0.1))
    _refused = False
except tf.errors.OperatorNotAllowedInGraphError:
    _refused = True
assert _refused, "fit ran a tf.range loop in train_step"
assert gl.split_sizes(11, 4) == [3, 3, 3, 2] and len(x) % 60 == 11  # "the 11 rows split 3, 3, 3, 2"
assert abs(history["loss"][0] - mine_history["loss"][0]) < 1e-6
assert abs(history["accuracy"][0] - mine_history["accuracy"][0]) < 1e-6  # your step logs compile's accuracy

# "fit traces your train_step with the batch dimension None, and runs that graph for every batch" (the last batch
# of 11 too): every trace fit makes of the step (two, as Keras 3.15 traces) sees the batch dimension None
_traced_batch = []


class _Traced(MyWhileLoopModel):
    def train_step(self, data):
        _traced_batch.append(data[0].shape[0])
        return super().train_step(data)


train(_Traced(fresh(), 4), keras.optimizers.SGD(0.1))
assert _traced_batch and set(_traced_batch) == {None}, _traced_batch

# The graphs: 5 MatMuls a micro-batch, unrolled N times or once in the while body; the loop's size is flat
for N in NS:
    assert matmuls["unrolled", N] == (5 * N, 0) and matmuls["while loop", N] == (0, 5), matmuls

# The memory peaks of the unrolled step and the while loop moved to lesson 11 (checks/11.py), which measures them
# on its budget's model; this lesson states only the loop's shape (one copy of the passes) and links there

# The two library ways
assert abs(mine_history["loss"][0] - acc_history["loss"][0]) < 1e-6
assert history["accuracy"][0] == acc_history["accuracy"][0]  # AccumulatingModel logs the large batch's accuracy
assert max_abs_diff(acc.get_weights(), large.get_weights()) < 1e-6
# "AccumulatingModel lands 6.0e-08 from the large batch and from your while loop: twice your Python loop's gap"
assert max_abs_diff(acc.get_weights(), looped.inner.get_weights()) <= 2 * float(np.spacing(np.float32(0.424)))
# the table's Keras column (lesson 06 takes it apart), printed: "The 611 digits in batches of 15 make 41 micro-batches,
# the last one 11 digits. Every four make an update: 10 updates from the first 40, while the 41st waits"; 41 apply calls
assert (len(fit_steps), int(keras_acc.iterations), int(keras_acc._iterations)) == (41, 10, 41), fit_steps
assert -(-len(x) // 15) == 41 and 41 // 4 == 10 and 41 % 4 == 1 and len(x) - 600 == 11

# Answer 3, masked tokens: counting rows misses ("9.6% of the epoch's move"), counting tokens lands "0.6 float32 spacings
# at the largest weight, 0.680, as AccumulatingModel: rounding"
assert seq_miss["AccumulatingModel"] < 1e-6 and seq_miss["tokens"] < 1e-6
assert f"{seq_top:.3f}" == "0.680" and seq_spacings["tokens"] < 10, (seq_top, seq_spacings)
assert f"{seq_spacings['tokens']:.1f}" == f"{seq_spacings['AccumulatingModel']:.1f}" == "0.6", seq_spacings
assert f"{seq_miss['rows']:.1e} {rows_share:.1%}" == "3.4e-03 9.6%", (seq_miss, rows_share)
assert abs(seq_logs["tokens"] - seq_logs["large batch"]) < 1e-6  # counting tokens logs the large batch's loss
# "as in Keras's accumulation": Keras's own accumulation weighs the four means 1/4, as the rows count does
assert max_abs_diff(keras_seq.get_weights(), seq_w["rows"]) < 1e-6
assert seq_miss["rows"] > 1e-3  # counting rows is a miss, not rounding

# The problems' solutions
assert max_abs_diff(mine16.inner.get_weights(), large.get_weights()) < 1e-6 and sizes.count(0) == 5
# Problem 2: your step's 11th update reads its count of updates, 10: rate 0.1 * 0.5 ** (10 / 10) = 0.0500; Keras's
# accumulation reads apply call 4 * 11 - 1 = 43 (lesson 06's rule: update k reads step 4k - 1): 0.1 * 0.5 ** 4.3 = 0.0051
assert read[10][0] == 10 and f"{read[10][1]:.4f}" == "0.0500" == f"{0.1 * 0.5 ** (10 / 10):.4f}", read[10]
# recorded on a two-epoch Keras run (Solution 2): "at apply call 43 ... rate 0.0051, recorded"
assert keras_11th[:2] == (10, 43) and f"{keras_11th[2]:.4f}" == "0.0051" == f"{0.1 * 0.5 ** (43 / 10):.4f}", keras_11th

# lesson 01's yardstick on the digits: right steps land 3.0e-08 to 6.0e-08 from plain fit, one or two of 01's spacings
# at the largest weight, 0.424 ("3.0e-08 ... below one eps of the largest weight, 0.424"; np.spacing(np.float32(0.424)) = 3.0e-08, under 0.424 eps); the solution checkers'
# 1e-6 is about 34 spacings, looser than the course's ten; "the checks cell at the end holds the printed right steps
# to two spacings"
_W = max(float(np.abs(w).max()) for w in large.get_weights())
_spacing = float(np.spacing(np.float32(_W)))
assert f"{_W:.3f}" == "0.424" and f"{_spacing:.1e}" == "3.0e-08" and round(1e-6 / _spacing) == 34, _W
_right = [max_abs_diff(m.get_weights(), large.get_weights()) for m in (mine.inner, looped.inner, acc, mine16.inner)]
assert max(_right) <= 2 * _spacing and [f"{min(_right):.1e}", f"{max(_right):.1e}"] == ["3.0e-08", "6.0e-08"], _right
assert max_abs_diff(mine.inner.get_weights(), large.get_weights()) <= _spacing  # "3.0e-08, below one eps of the largest weight"
assert max_abs_diff(mine16.inner.get_weights(), large.get_weights()) <= _spacing  # Answer 1: "3.0e-08, as before"

print("lesson 10: every number the prose states checks out")
