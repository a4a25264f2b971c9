"""Lesson 05's authors' checks: re-check every number the prose states, and each conclusion it draws
from a memory reading, against the names the notebook has just computed.

Run by the lesson's last code cell (`%run -i checks/05.py`), so nbval fails when a run disagrees
with the text. Not part of the lesson. The gaps the lesson compares with a float32 spacing are
checked against that spacing; every other number is checked as the prose rounds it.
"""
from fractions import Fraction

import numpy as np

spacing = lambda v: float(np.spacing(np.float32(v)))

# the worked example: w [1.5, 3], b 0.75, and host_average equal to yours
assert [m.tolist() for m in weighted_mean(grads_list, [3, 1])] == [[1.5, 3.0], 0.75]
assert max_abs_diff(weighted_mean(grads_list, [3, 1]), host_average(grads_list, counts=[3, 1])) == 0
assert max_abs_diff(plain_mean(grads_list), host_average(grads_list)) == 0

# your classic graph: the mean is the large batch's gradient to a few float32 spacings
assert f"{top_g:.3f}" == "0.086" and f"{spacing(top_g):.1e}" == "7.5e-09"
assert 0 < max_abs_diff(mean, large) <= 4 * spacing(top_g)  # 1.9e-08 in the stored run
assert max_abs_diff(mean, host_average(fetched)) == 0  # "exactly (0.0)"
assert diff == 0  # feeding the mean back: w - 0.1 * mean exactly

# three updates: N = 4 against N = 1, your TF2 step, gradlab's two; one float32 step at 0.159
w_top = max(float(np.abs(w).max()) for w in large_weights)
assert f"{w_top:.3f}" == "0.159" and f"{spacing(w_top):.1e}" == "1.5e-08"
for weights, reference in ((hand_weights, hand_large), (my_weights, large_weights),
                           (host_weights, large_weights), (v1_weights, large_weights)):
    assert max_abs_diff(weights, reference) <= spacing(w_top), max_abs_diff(weights, reference)

# 63 = 16 + 16 + 16 + 15: the plain mean's miss is the weight mismatch 1/84 times the spread
assert f"{plain_error:.1e}" == "2.4e-02" and f"{spread:.2f}" == "2.05"
assert f"{spread / 84:.1e}" == "2.4e-02"
assert abs(spread / 84 - plain_error) < 1e-3 * plain_error
assert weighted_error < 1e-6  # 1.4e-07: rounding
assert (Fraction(1, 4) - Fraction(16, 63), Fraction(1, 4) - Fraction(15, 63)) == (Fraction(-1, 252),
                                                                                  Fraction(1, 84))

# your running sum: sum_i n_i g_i / 63, as weighted_mean and host_average give it (exactly, for
# the solution; a learner's passing version is held to the checker's bound)
assert max(sum_gaps) <= 1e-6 * top_g, sum_gaps
if add_to_sum is solution_add_to_sum:
    assert sum_gaps == (0.0, 0.0), sum_gaps

# what the device and the host hold: +0.00 after each micro-batch, a peak of about one gradient
# (0.78 MiB); numpy gaining one gradient per micro-batch when it keeps all, two with the running sum
assert f"{G / MiB:.2f}" == "0.78"
kept_all, summed_run = readings["all kept"], readings["running sum"]
assert all(abs(d) < 0.01 and G / MiB <= p < 1.2 * G / MiB and abs(h - i) < 0.05
           for i, (p, d, h) in enumerate(kept_all, 1)), kept_all
assert all(abs(h - 2) < 0.05 for p, d, h in summed_run), summed_run

# the budgets, as the table and the prose round them, and gradlab's to the byte
assert gap == 0 and a_mlp == 5_224 == memory_budget.activation_bytes_per_row(model)
assert (f"{4 * P_mlp / MiB:.2f}", f"{48 * a_mlp / MiB:.2f}") == ("0.78", "0.24")
shown = {name: tuple(mib(m[k]) for k in ("large batch", "in-graph", "host")) for name, m in budgets.items()}
assert shown == {"MLP, SGD, 64 = 4 x 16": ("1.87", "2.41", "1.63"),
                 "ResNet-50, Adam, 256 = 8 x 32": ("36,641", "5,019", "4,922"),
                 "ResNet-50, Adam, 256 = 256 x 1": ("36,641", "630", "532")}, shown
saves = {name: (f"{1 - m['host'] / m['in-graph']:.0%}", f"{1 - m['host'] / m['large batch']:.0%}")
         for name, m in budgets.items()}
assert saves["MLP, SGD, 64 = 4 x 16"] == ("32%", "13%")
assert saves["ResNet-50, Adam, 256 = 8 x 32"][0] == "2%"
assert saves["ResNet-50, Adam, 256 = 256 x 1"][0] == "16%"
assert max(budgets["MLP, SGD, 64 = 4 x 16"], key=budgets["MLP, SGD, 64 = 4 x 16"].get) == "in-graph"

# the GPU prediction (datasheet rates, NVIDIA's batch-1 latency), per update at 256 x 1, and what fits
assert (B, N) == (256, 256) and f"{moved / 1e9:.2f}" == "26.30" and f"{1000 * moved / pcie:.0f}" == "411"
assert f"{B * step_1:.2f}" == "4.04" and f"{1000 * B * image_flop / fp32:.0f}" == "114"
assert f"{B * 4 * P / 1e9:.1f}" == "26.2" and f"{8 * P / 1e9:.2f}" == "0.20"
# "no to both": the copies take less than the batch-1 steps (constants) and than the host's
# additions (measured: 411 ms would need 256 additions of 102 MB in 1.6 ms each, ~190 GB/s)
assert moved / pcie < B * step_1 / 5
assert moved / pcie < B * add_s, add_s
assert all(f"{(budgets[n]['in-graph'] - budgets[n]['host']) / MiB:.0f}" == "98"
           for n in ("ResNet-50, Adam, 256 = 8 x 32", "ResNet-50, Adam, 256 = 256 x 1"))
b832 = budgets["ResNet-50, Adam, 256 = 8 x 32"]
assert b832["large batch"] > 16 * 2**30 >= b832["in-graph"] and b832["large batch"] <= 80e9

# the problems' answers
assert max_abs_diff(one_update(0.1 / 4, [sum(g) for g in zip(*fetched)]), one_update(0.1, mean)) == 0
gap3 = max_abs_diff(one_update(0.1 / 3, [sum(g) for g in zip(*fetched[:3])]),
                    one_update(0.1, plain_mean(fetched[:3])))
assert 0 < gap3 <= spacing(w_top)  # problem 1: 1.5e-08, one float32 step
ratios = [f"{size(adam_change(summed, lr)) / size(mean_change):.3f}" for lr in (1e-3 / 4, 1e-3)]
assert ratios == ["0.252", "1.006"], ratios
assert f"{eps_prime:.1e}" == "3.2e-06" and f"{1e-3 / eps_prime:.0f}" == "316"
adam_gap = adam_gaps[v_][k_]
assert adam_gap > 3 * sgd_gap and sgd_gap <= spacing(w_top)  # problem 2: 7.5e-08 against 1.5e-08
assert g_at < eps_prime and abs(slope * dg_at - adam_gap) < 0.1 * adam_gap  # the slope explains it
assert (f"{adam_gap:.1e}", f"{g_at:.1e}", f"{dg_at:.1e}", f"{slope:.0f}",
        f"{slope * dg_at:.1e}") == ("7.5e-08", "7.1e-07", "3.5e-10", "210", "7.3e-08")
assert 0.1 * max_abs_diff(mean, large) < sgd_gap / 5  # SGD's gap is the weight's rounding
print("the authors' checks pass")
