"""The authors' checks of lesson 04 (not part of the lesson): every number the prose states, re-checked
against the names the notebook's run left behind (`%run -i` from its last cell). They fail loudly if a
run disagrees with the text. No number in this lesson is a timing: all are pinned as printed. The learner's exercises
(towers_gradients, global_mean_loss) are checked as picked by yours_or_solution."""
import numpy as np
import tensorflow as tf

import gradlab as gl


def fmt(x, spec):
    return format(float(x), spec)


def rows_of(dist, shards):
    return [int(y_r.shape[0]) for y_r in dist.experimental_local_results(shards[1])]


# Average two towers by hand: both equal gradlab's exactly
for yours, lib, expected in ((average_gradients(tower_grads), gl.average_gradients(tower_grads), ([2, 4], 1.0)),
                             (weighted_average_gradients(tower_grads, [3, 1]),
                              gl.average_gradients(tower_grads, counts=[3, 1]), ([1.5, 3], 0.75))):
    assert all(float(tf.reduce_max(tf.abs(g - g_lib))) == 0.0 for (g, _), (g_lib, _) in zip(yours, lib))
    assert yours[0][0].numpy().tolist() == expected[0] and float(yours[1][0]) == expected[1]

# The classic graph: one copy of the weights, and the towers against the large batch
assert numbers == 203_530 and fmt(4 * numbers / 2**20, ".2f") == "0.78"
assert [len(v) for f in feeds for v in f.values()] == [64] * 6 and fmt(4 * 32 * 784 / 2**10, ".0f") == "98"  # tower 1's half-batch
# lesson 01's yardstick: one float32 spacing at a value is eps times it
spacing_g, spacing_w = np.finfo(np.float32).eps * g_max, np.finfo(np.float32).eps * w_max
assert (fmt(tower_gap, ".1e"), fmt(g_max, ".3f"), fmt(spacing_g, ".1e")) == ("1.5e-08", "0.094", "1.1e-08")
assert fmt(tower_gap / spacing_g, ".1f") == "1.3"  # 1.3 spacings at the largest entry
assert (fmt(max(w_gaps), ".1e"), fmt(w_max, ".3f")) == ("1.5e-08", "0.163") and max(w_gaps) < spacing_w  # under one
assert fmt(spacing_w, ".1e") == "1.9e-08"

# The TF2 step
assert (fmt(min(large_losses), ".2f"), fmt(max(large_losses), ".2f")) == ("2.17", "2.32")
loss_gap = np.abs(np.subtract(my_losses, large_losses)).max()
assert fmt(loss_gap, ".1e") == "2.4e-07" and fmt(np.finfo(np.float32).eps * max(large_losses), ".1e") == "2.8e-07"
assert loss_gap < np.finfo(np.float32).eps * max(large_losses)  # "under one float32 spacing at 2.32"
assert fmt(max_abs_diff(my_weights, large_weights), ".1e") == "1.5e-08"

# MirroredStrategy: the cut, the divisors
assert rows_of(dist, shards) == [32, 31]
assert divisors_2 == ["64", "62"], divisors_2  # Keras's mean loss: n_r R, not B = 63
assert (fmt(spread, ".2f"), fmt(spread / 126, ".1e"), fmt(keras_error, ".1e")) == ("1.21", "9.6e-03", "9.6e-03")
assert fmt(keras_error / (spread / 126), ".3f") == "1.000"
assert fmt(fixed_error, ".1e") == "9.0e-08" and fixed_error < np.finfo(np.float32).eps
assert fmt(np.finfo(np.float32).eps, ".1e") == "1.2e-07"

# How often a batch splits unevenly: 4,000 digits in batches of 64 are 62 x 64 + 32, 63 updates an epoch;
# 2 divides 64 and 32 (no uneven update), 3 divides neither (all 63 uneven)
assert len(mnist.x_train) == 4000 == 62 * 64 + 32 and -(-4000 // 64) == 63
assert 64 % 2 == 0 and 32 % 2 == 0 and 64 % 3 != 0 and 32 % 3 != 0

# Three updates: only the uneven one opens a gap
assert [fmt(g, ".1e") for g in gaps] == ["0.0e+00", "0.0e+00", "1.2e-04"]
assert fmt(max_abs_diff(mine.get_weights(), large_weights), ".1e") == "1.5e-08"
assert fmt(max_abs_diff(mirrored.model.get_weights(), large_weights), ".1e") == "1.5e-08"
assert fmt(max_abs_diff(keras_mean.get_weights(), large_weights), ".1e") == "1.2e-04"
assert ratio_3 == gap(keras_mean.get_weights(), mine.get_weights()) / step_3  # the gap against update 3's step
assert fmt(ratio_3, ".1e") == "1.0e-02" and abs(ratio_3 / (spread / 126) - 1) < 0.1  # "about the 9.6e-03"

# Problem 1 (n = 64): the default cut is ceil(B/R) per replica in turn; auto-sharding OFF, the even cut
assert n == 64
rows_d, table_d, error_d = problem_1["default"]
assert rows_d == [22, 22, 20] == [min(-(-64 // 3), 64 - r * -(-64 // 3)) for r in range(3)]
assert table_d == ["66", "66", "60"], table_d
ends = np.cumsum([0] + rows_d)
g0, g1, g2 = [batch_mean_grads(x_n[a:b], y_n[a:b]) for a, b in zip(ends, ends[1:])]
closed = gap([u + v for u, v in zip(g0, g1)], [2 * w for w in g2]) / (96 * norm(g_n))  # ||g0 + g1 - 2 g2|| / 96
assert (fmt(error_d, ".1e"), fmt(closed, ".1e"), fmt(error_d / closed, ".3f")) == ("3.6e-02", "3.6e-02", "1.000")
rows_off, table_off, off_error = problem_1["OFF"]
assert rows_off == [22, 21, 21]
assert table_off == ["66", "63", "63"], table_off
assert fmt(off_error, ".1e") == "1.5e-02"

# Problem 2: a prediction from datasheets (PCIe 5.0 x16 at 63 GB/s, H100 PCIe float32 at 51 TFLOP/s)
assert (link, fp32) == (63e9, 51e12) and tau_c == 4 * 203_530 / 63e9 * 1e3
assert fmt(tau_c, ".3f") == "0.013" and fmt(2 * tau_c, ".3f") == "0.026"
assert flops_per_row == 4 * 203_530 + 2 * 256 * 10  # the first layer computes no input gradient
assert fmt(w1_share, ".0%") == "99%" and fmt(flops_per_row / numbers, ".2f") == "4.03"  # "about 4"
assert fmt(32 * flops_per_row / 1e6, ".0f") == "26"
assert extra_us == 32 * flops_per_row / fp32 * 1e6 and fmt(extra_us, ".1f") == "0.5"
assert format(extra_us / (2 * tau_c * 1e3), ".0%") == "2%"  # the share of peak at which 32 rows take 2 tau_c
assert break_even == 4 * tau_c / 1e3 * fp32 / flops_per_row  # rows whose half takes 2 tau_c at peak
assert format(break_even, ",.0f") == "3,218"
assert abs((break_even / 2) * flops_per_row / fp32 - 2 * tau_c / 1e3) < 1e-15  # half the rows: 2 tau_c, in seconds

print("lesson 04: every number the prose states checks out")
