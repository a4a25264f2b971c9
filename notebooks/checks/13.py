"""The authors' checks of lesson 13 (not part of the lesson): every number the prose states, re-checked
against the names the notebook's run left behind (`%run -i` from its last cell). They fail loudly if a
run disagrees with the text."""
import numpy as np

import gradlab as gl
from gradlab.lessons import check_batch, distribute

# The digits below come from the lesson's solutions; a learner's own local_sums or my_sum_and_count may add in
# another order, so with those only the tolerances are checked
solutions = local_sums is solution_local_sums and sum_and_count is solution_sum_and_count

# From towers to replicas: the copies, the cut of lesson 02's 63 digits, Keras's divisors n_r R
assert len(m_d.trainable_variables) == 4 and len(copies) == 8 and rows_63 == [32, 31]
assert divisors_63 == ["64", "62"], divisors_63  # Keras's mean loss: n_r R, not B = 63
# Keras's summed gradient is the plain mean of the 2017 tutorial's average_gradients (lesson 02), not 02's
# own towers (which divide once by B); 04 prints its miss of g_B on these digits (32 + 31), 1.2e-03
keras_plain, keras_miss, keras_rel = miss[32]
assert keras_plain < 1e-6 and abs(keras_miss - 1.2e-03) < 5e-5
assert abs(keras_rel - 0.010) < 5e-4  # the miss over |g_B|, lesson 01's; lesson 15 quotes "1.0%"
# the lopsided cut 48 + 15: still the plain mean, a larger miss ("by 42.1%")
assert miss[48][0] < 1e-6 and miss[48][2] > 2 * keras_rel
if solutions:
    assert f"{keras_miss:.1e}" == "1.2e-03" and f"{keras_rel:.1%}" == "1.0%"
    assert all(f"{miss[n][0]:.1e}" == "0.0e+00" for n in miss)  # "exactly the plain mean ... on both cuts"
    assert f"{miss[48][2]:.1%}" == "42.1%"  # "on 48 + 15, by 42.1%"


# Accumulate, then all-reduce once: the even split, gradlab's and TensorFlow's shards (lesson 15 checks
# TensorFlow's route, which can cut other batches differently, on 2, 3, 4 and 6 replicas)
assert tf_shards == shards == check_batch(B, R) == [16, 15] and check_batch(4, 3) == [2, 1, 1]
assert check_batch(64, 3) == [22, 21, 21]  # and TensorFlow's [22, 22, 20] (lesson 15): "can cut differently"
# yours (or the solution) and the naive loop give g_B and L_B
assert max(sum_count_gaps.values()) < 1e-6 and gap_once_8 < 1e-6 and gap_naive_8 < 1e-6
assert all(counts[n] == (1, 1, n) for n in counts)
assert f"{4 * n_params / 2**20:.2f}" == "0.78" and f"{g_max:.3f}" == "0.119"
if solutions:  # the digits the prose states, from the lesson's solutions
    assert f"{sum_count_gaps['gradient']:.1e}" == "3.0e-08" == f"{gap_once_8:.1e}" == f"{gap_naive_8:.1e}"
    assert sum_count_gaps["loss"] == 0 and f"{sum_count_gaps['gradient'] / spacing_31:.0f}" == "4"  # "4 spacings"
# The timing varies between runs: only the conclusion the prose draws (no digits), as medians of ratios taken
# within a round of interleaved calls, with room for a loaded machine
assert ratios["naive 8", "once 8"] > 1.2  # "naive takes about twice as long as yours at N = 8" (2.0 to 2.3 seen; a loaded machine narrows it)
assert ratios["once 8", "once 1"] > 1.05  # "yours longer at 8 than at 1" (1.3 and 1.5 seen)

# A short batch: the global_batch_size route
assert public_collectives == 1 and f"{np.round(large3_losses, 4)}" == "[2.3257 2.2085 2.2168]"
assert public_loss_gap < 1e-6 and public_w_gap < 1e-6 and f"{moved:.1e}" == "1.7e-02"
if solutions:
    assert f"{public_loss_gap:.1e}" == "1.2e-07" and f"{public_w_gap:.1e}" == "1.5e-08"
assert short_shards == [9, 8] and f"{step_ratio:.3f}" == "0.548" and abs(step_ratio - 17 / B) < 1e-4
assert check_batch(17, R) == [9, 8]  # the tutorial's n_r R: 18 and 16
assert default_divisors == ["18", "16"], default_divisors  # measured: compute_average_loss without global_batch_size
assert (9 / 18, 8 / 16) == (0.5, 0.5)  # "the plain mean of the two shards again": each shard weighs 1/R

# Going further, your step with Adam: yours (the Adam route) against large_batch, summed twice, gradlab's mirrored
yours, twice = routes["yours"], routes["summed twice"]
assert max(abs(a - b) for a, b in zip(yours["losses"], large_losses)) < 1e-6  # the large batch's losses
assert yours["w"] < 1e-6 and mirrored_gap < 1e-6 and abs(yours["m"] - 1) < 1e-5  # "matches the large batch"
assert max(abs(a - b) for a, b in zip(mirrored_losses, large_losses)) < 1e-6
assert f"{twice['m']:.2f}" == "2.00" and abs(twice["m"] - R) < 2e-3  # "its first moments are twice"
# "barely": the doubled mu and sqrt(nu) cancel except against epsilon (Adam with epsilon / 2, lesson 04), so the
# median weight is far closer than the largest gap, and the 1% largest gaps sit where sqrt(nu) is small, within
# 100 epsilon, against a typical sqrt(nu) over ten times larger
assert twice["w_median"] < 1e-5 and twice["w_median"] < twice["w"] / 100, (twice["w_median"], twice["w"])
assert twice["root_nu_top"] < 100e-7 and twice["root_nu_all"] > 10 * twice["root_nu_top"], twice
if solutions:  # "the largest gap, 2.2e-03"; "at most 3.4e-07 (mirrored, 1.4e-07)"; "3.8e-07"; "28" and "2,066" epsilon
    assert (f"{twice['w']:.1e}", f"{yours['w']:.1e}", f"{mirrored_gap:.1e}") == ("2.2e-03", "3.4e-07", "1.4e-07")
    assert f"{twice['w_median']:.1e}" == "3.8e-07", twice["w_median"]
    assert (f"{twice['root_nu_top'] / 1e-7:,.0f}", f"{twice['root_nu_all'] / 1e-7:,.0f}") == ("28", "2,066"), twice
assert yours["collectives"] == 2 and twice["collectives"] == 2 and mirrored.all_reduces_per_update() == 1

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
