"""The authors' checks of lesson 13 (not part of the lesson): every number the prose states, re-checked
against the names the notebook's run left behind (`%run -i` from its last cell). They fail loudly if a
run disagrees with the text."""
import numpy as np

import gradlab as gl
from gradlab.lessons import check_batch, distribute, verdict

# The digits below come from the lesson's solutions; a learner's own local_sums or my_sum_and_count may add in
# another order, so with those only the tolerances are checked
solutions = local_sums is solution_local_sums and sum_and_count is solution_sum_and_count

# From towers to replicas: the copies, the cut of lesson 02's 63 digits, Keras's divisors n_r R
assert len(m_d.trainable_variables) == 4 and len(copies) == 8 and rows_63 == [32, 31]
assert divisors_63 == ["64", "62"], divisors_63  # Keras's mean loss: n_r R, not B = 63
# Keras's summed gradient is the plain mean of the 2015 tutorial's average_gradients (lesson 02), not 02's
# own towers (which divide once by B). Its miss of g_B on 32 + 31 is printed ("by 0.963% on the 32 + 31 cut",
# pinned below with the solutions); keras_rel (the miss over |g_B|) guards that the cut and the start did not change
keras_plain, keras_rel = by_cut[32]
assert keras_plain <= 10 and abs(keras_rel - 0.010) < 5e-4
# the lopsided cut 48 + 15: still the plain mean, a larger miss ("by 42.1% of its length here")
assert by_cut[48][0] <= 10 and by_cut[48][1] > 2 * keras_rel
if solutions:
    assert all(by_cut[n][0] == 0 for n in by_cut)  # "exact, 0.0 spacings ... on both cuts"
    assert f"{by_cut[48][1]:.1%}" == "42.1%" and verdict(keras_g, g_B) == "miss 42.1%"  # "on 48 + 15, by 42.1%"
    assert g_B_said == {32: "miss 0.963%", 48: "miss 42.1%"}, g_B_said  # "by 0.963% on the 32 + 31 cut"


# Accumulate, then all-reduce once: the even split, gradlab's and TensorFlow's shards (lesson 15 checks
# TensorFlow's route, which can cut other batches differently, on 2, 3, 4 and 6 replicas)
assert tf_shards == shards == check_batch(B, R) == [16, 15] and check_batch(4, 3) == [2, 1, 1]
assert check_batch(64, 3) == [22, 21, 21]  # and TensorFlow's [22, 22, 20] (lesson 15): "can cut differently"
# yours (or the solution) and the naive loop give g_B and L_B
assert max(sum_count_gaps.values()) <= 10 and gap_once_8 <= 10 and gap_naive_8 <= 10  # spacings
assert all(counts[n] == (1, 1, n) for n in counts)
# gradlab's mirrored update at every accum_steps: one SGD(0.1) step on g_B ("exact (1.0 spacings, printed)")
assert mirrored_gap <= 10, mirrored_gap  # spacings, the worst of the 4 runs
assert verdict(worst, sgd_on_g_B).startswith("exact: 1.0 spacings"), verdict(worst, sgd_on_g_B)
assert f"{4 * n_params / 2**20:.2f}" == "0.78"  # "the whole gradient (0.78 MiB)"
if solutions:  # the digits the prose states, from the lesson's solutions
    assert sum_count_gaps["loss"] == 0  # "0.0 spacings" printed: "yours gives L_B to the last bit"
    assert all(verdict(g, g_large).startswith("exact: 4.0 spacings") for g in (once_8, naive_8))  # "exact: 4.0 spacings"
    # "rounding only, for both add the same 31 rows' gradients as one tape, in another order": exact, within ten
# A short batch: the global_batch_size route
assert public_collectives == 1 and public_loss_gap <= 10 and public_w_gap <= 10  # spacings
assert verdict(public_model.get_weights(), large3.model.get_weights()).startswith("exact")  # "the large batch ("exact")"
assert short_shards == [9, 8] and f"{step_ratio:.3f}" == "0.548" and abs(step_ratio - 17 / B) < 1e-4
# your sum and count on the short batch: the 17 digits' g_B ("length ratio 1.000", "... apart")
assert counted_gap <= 10 and f"{counted_ratio:.3f}" == "1.000" and verdict(counted, g_17).startswith("exact")
assert check_batch(17, R) == [9, 8]  # the tutorial's n_r R: 18 and 16
assert default_divisors == ["18", "16"], default_divisors  # measured: compute_average_loss without global_batch_size
assert (9 / 18, 8 / 16) == (0.5, 0.5)  # "the plain mean of the two shards again": each shard weighs 1/R
# "Its step is full length (length ratio 1.003), but it misses g_B by 4.57%"
assert f"{default_ratio:.3f}" == "1.003" and verdict(default_g, g_17) == "miss 4.57%", (default_ratio, verdict(default_g, g_17))

# Problem 1 (pencil): R = 4, B = 30, accum_steps = 2
assert check_batch(30, 4) == [8, 8, 7, 7] and gl.split_sizes(8, 2) == [4, 4] and gl.split_sizes(7, 2) == [4, 3]
assert np.allclose([1 / 4 - n / 30 for n in (8, 7)], [-1 / 60, 1 / 60])

# Problem 3 (pencil): B = 4,096 on R = 8, N = 8; the epoch's last batch of 1,000 rows
assert check_batch(4096, 8) == [512] * 8 and gl.split_sizes(512, 8) == [64] * 8
assert check_batch(1000, 8) == [125] * 8 and gl.split_sizes(125, 8) == [16] * 5 + [15] * 3
assert f"{1000 / 4096:.3f}" == "0.244"  # the global_batch_size route's share of the large batch's step

try:  # gradlab's guard: a batch too small to give every replica an example
    check_batch(1, R)
    raise AssertionError("check_batch(1, R) accepted a batch of 1")
except ValueError as e:
    assert "too small for 2 replicas" in str(e)
print("lesson 13: every number the prose states checks out")
