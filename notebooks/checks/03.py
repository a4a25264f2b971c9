"""Lesson 03's authors' checks: re-check every number the prose states against the names the notebook
has just computed.

Run by the lesson's last code cell (`%run -i checks/03.py`), so nbval fails when a run disagrees
with the text. Not part of the lesson. The gaps the lesson compares with a float32 spacing are
checked against that spacing; every other number is checked as the prose rounds it.
"""
from fractions import Fraction

import numpy as np

spacing = lambda v: float(np.spacing(np.float32(v)))

# Chlebus's plain_mean is gradlab's host_average without counts, and weighted_mean is it with counts
assert max_abs_diff(plain_mean(fetched), host_average(fetched)) == 0
assert max_abs_diff(weighted_mean(parts, [16, 16, 16, 15]), host_average(parts, counts=[16, 16, 16, 15])) == 0

# your graph half and loop are the lesson's (a passing version of yours, or the solution)
assert averaged_and_apply in (my_averaged_and_apply, solution_averaged_and_apply)
assert host_step in (my_host_step, solution_host_step)

# your classic graph: the mean is the large batch's gradient to a few float32 spacings
top_g = max(float(np.abs(g).max()) for g in large)  # 0.086, spacing 7.5e-09
assert 0 < max_abs_diff(mean, large) <= 4 * spacing(top_g)
assert f"{max_abs_diff(mean, large):.1e}" == "1.9e-08"
assert relative_error(mean, large) < 1e-6 and f"{relative_error(mean, large):.1e}" == "1.1e-07"
assert max_abs_diff(mean, weighted_mean(fetched, [16] * 4)) == 0  # the mean fed: weighted_mean's
assert max_abs_diff(mean, plain_mean(fetched)) == 0 == max_abs_diff(mean, host_average(fetched))  # "exactly" on equal parts
assert diff == 0  # feeding the mean back: w - 0.1 * mean exactly

# three updates: N = 4 against N = 1, your TF2 running sum, gradlab's two: one float32 spacing at the largest
# weight (0.159: 1.5e-08) at most
top = max(float(np.abs(w).max()) for w in hand_large)  # the largest weight: one float32 step there
assert f"{top:.3f}" == "0.159" and f"{np.spacing(np.float32(top)):.1e}" == "1.5e-08"
w_top = max(float(np.abs(w).max()) for w in large_weights)
assert f"{w_top:.3f}" == "0.159" and spacing(w_top) == spacing(top)
pairs = ((hand_weights, hand_large), (my_weights, large_weights), (host_weights, large_weights),
         (v1_weights, large_weights))
for weights, reference in pairs:
    assert max_abs_diff(weights, reference) <= spacing(w_top), max_abs_diff(weights, reference)
    assert f"{max_abs_diff(weights, reference):.1e}" == "1.5e-08"  # each row of the table, as the prose states
# lesson 01's yardstick: a relative gap compares with 1, where one spacing is eps (1.2e-07): 1.1e-07 is about one
eps = float(np.finfo(np.float32).eps)
assert f"{eps:.1e}" == "1.2e-07" and eps == np.spacing(np.float32(1)) and 0.5 < relative_error(mean, large) / eps <= 1

# 63 = 16 + 16 + 16 + 15 against the 63's own gradient: the weighted mean misses by about float32's epsilon,
# one spacing at 1
assert [len(a) for a in xs63] == [16, 16, 16, 15]
assert weighted_error < 1e-6 and f"{weighted_error:.1e}" == "1.4e-07"
assert 0.5 < weighted_error / eps < 1.5
# the running sum makes weighted_mean's float32 additions in the same order: bit for bit on the 63's parts
running = None
for n, g in zip([16, 16, 16, 15], parts):
    term = [a * np.float32(n) for a in g]
    running = term if running is None else [r + a for r, a in zip(running, term)]
assert max_abs_diff([r / np.float32(63) for r in running], weighted) == 0
# Chlebus's plain_mean on the same 16 + 16 + 16 + 15: its own miss, far above rounding (2.4e-02, 2.4%)
assert plain_error > 100 * eps and f"{plain_error:.1%}" == "2.4%" and f"{plain_error:.1e}" == "2.4e-02", plain_error

# the problems' answers
assert max_abs_diff(one_update(0.1 / 4, [sum(g) for g in zip(*fetched)]), one_update(0.1, mean)) == 0
gap3 = max_abs_diff(one_update(0.1 / 3, [sum(g) for g in zip(*fetched[:3])]),
                    one_update(0.1, plain_mean(fetched[:3])))
assert 0 < gap3 <= spacing(w_top)  # problem 1: 1.5e-08, one float32 step
assert f"{gap3:.1e}" == "1.5e-08"
# the relative gaps the lesson calls "about float32's epsilon" (gradients) are a few eps at most
assert all(r < 2 * eps for r in [relative_error(mean, large), weighted_error])

# what host averaging moves: this MLP at N = 4, in MiB, as the prose rounds them
assert P == 203_530 and N == 4 and G == 4 * P and MiB == 2 ** 20
assert f == 784 * 256 / P and f"{f:.1%}" == "98.6%"  # the first kernel
assert [f"{G / MiB:.2f}", f"{N * G / MiB:.2f}"] == ["0.78", "3.11"]  # a gradient back; N out
assert f"{N + 2 * f:.2f}" == "5.97"  # the list's peak, in gradients (lesson 17 measures 12.0 at N = 10)
assert f"{N + (N + 1) * f:.2f}" == "8.93"  # the list averaged by Chlebus's np.stack(...).mean(axis=0)
# the host's measured peaks (fetches, list and mean all traced), in G: each near its rule; the prose rounds them
# to one decimal (2.0, 6.0, 9.1). Tolerant: tracemalloc counts Python's small objects too
run_sum, wm, st = (peaks[k][0] for k in ("your running sum", "list, weighted_mean", "list, Chlebus's line"))
assert abs(run_sum - 2) < 0.05 and f"{run_sum:.1f}" == "2.0", run_sum
assert abs(wm - (N + 2 * f)) < 0.05 and abs(wm - 6.0) < 0.06, wm  # "6.0 G"
assert 0 <= st - (N + (N + 1) * f) < 0.3 and abs(st - 9.1) < 0.1, st  # "9.1 G"; "within 0.3 G of its rule"
# the running sum holds fewer gradients than either list
assert run_sum < wm < st
# problem 2: 100 million parameters, N = 10, in GB; the copies at PCIe 5 x16's 64 GB/s
assert [f"{x / 1e9:.1f}" for x in (N_big * G_big, G_big, (N_big + 2) * G_big, 2 * G_big)] == [
    "4.0", "0.4", "4.8", "0.8"]
assert f"{(2 * N_big + 1) * G_big / 1e9:.1f}" == "8.4"  # np.stack: the ten, a copy of a variable's ten, their mean
assert f"{1000 * (N_big + 1) * G_big / 64e9:.0f}" == "69"  # lesson 17 quotes it
assert f"{1000 * (N_big + 1) * G_big / 63e9:.0f}" == "70"  # after encoding
print("lesson 03: every number the prose states checks out")
