"""The authors' checks of lesson 15 (not part of the lesson): every number the prose states, re-checked
against the names the notebook's run left behind (`%run -i` from its last cell). They fail loudly if a
run disagrees with the text."""
import numpy as np
import tensorflow as tf

import gradlab as gl
from gradlab.lessons import check_batch, distribute, offsets

# From towers to replicas: the copies, the cut of 63 digits, Keras's divisors n_r R, its miss against the closed form
assert len(m_d.trainable_variables) == 4 and len(copies) == 8 and rows_63 == [32, 31]
assert divisors_63 == ["64", "62"], divisors_63  # Keras's mean loss: n_r R, not B = 63
assert (f"{spread:.2f}", f"{spread / 126:.1e}", f"{keras_error:.1e}") == ("1.41", "1.1e-02", "1.1e-02")
assert f"{keras_error / (spread / 126):.3f}" == "1.000"
assert f"{fixed_error:.1e}" == "9.3e-08" and fixed_error < np.finfo(np.float32).eps
assert f"{np.finfo(np.float32).eps:.1e}" == "1.2e-07"

# Part 1: shards, contributions, the packed all-reduce, the counts
assert tf_shards == shards == check_batch(B, R) and starts == offsets(shards)
# TensorFlow's input route fills each replica in turn with ceil(B / R) rows
# (lesson 17 prints it on three replicas, 64 rows as 22 + 22 + 20, and an empty shard)
def ceil_fill(B, R):
    full = -(-B // R)
    return [max(0, min(full, B - r * full)) for r in range(R)]


assert ceil_fill(4, 3) == [2, 2, 0] and check_batch(4, 3) == [2, 1, 1] and ceil_fill(64, 3) == [22, 22, 20]
assert f"{hand_gap:.1e}" == "2.2e-08" and f"{g_max:.3f}" == "0.119"
_spacing = float(np.finfo(np.float32).eps) * g_max  # lesson 01's yardstick: one float32 spacing at the largest entry
assert hand_gap < 2 * _spacing and f"{_spacing:.1e}" == "1.4e-08"  # "under two spacings"
assert f"{factor:g}" == "2" == f"{R:g}"  # a mean-reduced Keras loss divides by R inside a replica
assert abs(inside - outside / R) < 1e-6 * outside  # measured on replica 0, not outside / factor
assert (f"{in_scope:.4f}", f"{inside:.4f}", f"{outside:.4f}") == ("1.0430", "1.0430", "2.0860")  # lesson 17 quotes them
# the cross-replica context is the strategy's scope, not all code outside run; a mean loss there is / R too
assert cross_in_scope is True and cross_outside is False and abs(in_scope - outside / R) < 1e-6 * outside
assert my_count == 2 == distribute.count_all_reduces(graph) and set(MY_ALL_REDUCE_TYPES) == set(distribute.ALL_REDUCE_OPS)
assert ceil_fill(31, 3) == [11, 11, 9] and check_batch(31, 3) == [11, 10, 10]  # where the two rules part
assert all(tf_rule(b, r) == ceil_fill(b, r) for b in range(1, 70) for r in range(1, 6))  # the lesson's loop
# printed on 3 replicas: TensorFlow cuts by tf_rule; with auto_shard_policy OFF it keeps the even split
assert tf_shards_3 == tf_rule(B, 3) == [11, 11, 9] and off_shards_3 == check_batch(B, 3) == [11, 10, 10]
assert tf_rule(64, 3) == [22, 22, 20]  # lesson 17's split of 64 rows
assert all(counts[n] == (1, 1, n) for n in counts)
# your step (or the solution) and the naive loop both give g_B, on entries up to 0.119 (both printed at 8)
assert once_gaps[accum_steps] < 1e-6 and gap_naive_8 < 1e-6 and f"{g_max:.3f}" == "0.119"
assert f"{once_gaps[accum_steps]:.1e}" == "2.2e-08" and gap_once_8 < 1e-6
assert (f"{gap_once_8:.1e}", f"{gap_naive_8:.1e}") == ("3.0e-08", "3.0e-08")
assert f"{4 * n_params / 2**20:.2f}" == "0.78"
# The timing varies between runs: only the conclusion the prose draws, with room for the spread
assert ratio_8 > 1.2 and extra_ms[8] > 0  # naive's 7 extra all-reduces at accum_steps = 8 slow the update
# "both curves rise": at a fixed batch of 31, once at accum_steps = 8 is slower than at 1
# (about 1.4x in the stored run, 1.5x to 2.5x in earlier runs: the margin leaves room for the spread)
assert np.median(ms["once 8"]) > 1.2 * np.median(ms["once 1"])

# The worked problem's numbers, from the inputs its text states (not from the editable cell)
ring_8, compute_256 = 2 * 7 / 8 * 4 * 25_583_592, 256 / 2375 * 1e3  # bytes per device; ms for 256 images
assert f"{compute_256:.1f}" == "107.8" and f"{compute_256 / 8:.1f}" == "13.5" and counts[8][2:0:-1] == (8, 1)  # naive 8 all-reduces, once 1
assert (f"{8 * ring_8 / 2**20:,.1f}", f"{ring_8 / 2**20:.1f}", f"{4 * 25_583_592 / 2**20:.1f}") == ("1,366.3", "170.8", "97.6")
assert f"{4 * 25_583_592 / 2**20:.1f}" == "97.6"  # the same gradient in MiB, as lesson 01 prints it
for bw, prices, stated in ((50e9, ("28.65", "3.58"), ("26.6%", "3.3%")), (300e9, ("4.78", "0.60"), ("4.4%", "0.6%")),
                          (25e9, ("57.31", "7.16"), ("53.2%", "6.6%"))):  # NDR, NVLink 3, HDR
    naive_ms, once_ms = 8 * ring_8 / bw * 1e3, ring_8 / bw * 1e3
    assert (f"{naive_ms:.2f}", f"{once_ms:.2f}") == prices
    assert (f"{naive_ms / compute_256:.1%}", f"{once_ms / compute_256:.1%}") == stated
# "overlap can hide the naive loop's extra time": each 3.58 ms InfiniBand all-reduce fits behind the next 13.5 ms micro-batch
assert (f"{ring_8 / 50e9 * 1e3:.2f}", f"{compute_256 / 8:.1f}") == ("3.58", "13.5") and ring_8 / 50e9 < compute_256 / 8e3
nvidia_8 = 256 / (17_400 / 8) * 1e3  # ms per 256-image step on each of 8 A100s
assert (f"{nvidia_8:.1f}", f"{nvidia_8 - compute_256:.1f}", f"{nvidia_8 / compute_256 - 1:.1%}") == ("117.7", "9.9", "9.2%")
# the all-reduce at nccl-tests' measured bus bandwidth, about 200 GB/s (busbw = ring bytes per GPU / time)
assert f"{ring_8 / 200e9 * 1e3:.2f}" == f"{nccl_ms:.2f}" == "0.90" and nvidia_8 - compute_256 > 10 * nccl_ms

# The public route, the short batch
assert [int(b.shape[0]) for b in tf.data.Dataset.range(79).batch(B, drop_remainder=True)] == [B, B]
assert public_collectives == 1 and f"{np.round(large3_losses, 4)}" == "[2.3257 2.2085 2.2168]"
assert public_loss_gap < 1e-6 and f"{public_loss_gap:.1e}" == "1.2e-07"
assert public_w_gap < 1e-6 and f"{public_w_gap:.1e}" == "1.5e-08" and f"{moved:.1e}" == "1.7e-02"
assert short_shards == [9, 8] and f"{step_ratio:.3f}" == "0.548" and abs(step_ratio - 17 / B) < 1e-4
assert f"{short_public_gap:.1e}" == "8.3e-03" and f"{largest_step:.1e}" == "1.8e-02"

# Sum and count; gradlab's mirrored
own_loss_gap = max(abs(a - b) for a, b in zip(own_losses, large_losses))
mirrored_loss_gap = max(abs(a - b) for a, b in zip(mirrored_losses, large_losses))
assert max(own_loss_gap, mirrored_loss_gap, own_gap, own_large_gap, mirrored_gap) < 1e-6
assert all(f"{gap:.1e}" == "1.5e-08" for gap in (own_gap, own_large_gap, mirrored_gap))
assert own_collectives == 1 and mirrored.all_reduces_per_update() == 1
assert max(sum_count_gaps) < 1e-6  # printed by the cell after the checker: the learner's (or the solution's) gaps to g_B and the mean

# Problem 1 (pencil): R = 4, B = 30, accum_steps = 2
assert check_batch(30, 4) == [8, 8, 7, 7] and gl.split_sizes(8, 2) == [4, 4] and gl.split_sizes(7, 2) == [4, 3]
assert ceil_fill(30, 4) == [8, 8, 8, 6]
assert sum(1 / 4 for shard in range(4) for micro in range(2)) == 2  # per micro-batch: the weights sum to 2
assert abs(sum(1 / 4 - n / 30 for n in (8, 8)) + 2 / 60) < 1e-12  # the miss: (m2 + m3 - m0 - m1) / 60
# on TensorFlow's 8, 8, 8, 6 the weights' errors 1/4 - n_r/30 are -1/60, -1/60, -1/60, +3/60
assert np.allclose([1 / 4 - n / 30 for n in ceil_fill(30, 4)], [-1 / 60, -1 / 60, -1 / 60, 3 / 60])

# Problem 2's answer: the one InfiniBand all-reduce under 5 % of compute from accum_steps = 6 on
ib_share = {k: ring_8 / 50e9 / (k * 32 / 2375) for k in range(4, 9)}
assert (f"{ib_share[5]:.1%}", f"{ib_share[6]:.1%}") == ("5.3%", "4.4%") and ib_share[5] > 0.05 > ib_share[6]
assert min(k for k in ib_share if ib_share[k] < 0.05) == 6

try:  # gradlab's guard: a batch too small to give every replica an example
    check_batch(1, R)
    raise AssertionError("check_batch(1, R) accepted a batch of 1")
except ValueError as e:
    assert "too small for 2 replicas" in str(e)
print("lesson 15: every number the prose states checks out")
