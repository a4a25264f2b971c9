"""Lesson 01's authors' checks: every number its prose states, re-checked on each run.

Run by the lesson's last cell (`%run -i checks/01.py`) in the notebook's namespace; each assert
fails loudly (nbval, `make notebooks`) if a run ever disagrees with the text. Float32 rounding
(about 1e-8) is checked as a bound, not digits, so another machine passes. Not part of the lesson.
"""
import numpy as np

# Average the means: 6.0 against 6.5
assert means == [4.0, 9.0] and losses.mean() == 6.0 and np.mean(means) == 6.5
assert float(np.dot(weights([3, 2]), means)) == 6.0 and list(weights([3, 2])) == [0.6, 0.4]
# the proof on 96 digits: rounding only, entries up to 0.077
assert all(d < 1e-6 for d in proofs.values()) and sorted(proofs) == [4, 5], proofs
assert round(max(float(np.max(np.abs(g))) for g in g_B), 3) == 0.077
# divide once: equal to the n_i/B weighting; compute_average_loss sums to the batch mean 2.3198
assert all(d < 1e-6 for d in once.values()) and sorted(once) == [4, 5], once
assert f"{tf_loss:.4f}" == f"{float(batch_loss):.4f}" == "2.3198", (tf_loss, float(batch_loss))
assert max_abs_diff(tf_grads, g_B) < 1e-6  # and its gradient is g_B, to rounding
# the plain mean: 68.1% off, 0.0598 largest; the weighted sum rounding only; the figure's factors
assert f"{relative_error(plain, g_large):.1%}" == "68.1%" and f"{plain_diff:.4f}" == "0.0598"
assert weighted_diff < 1e-6 and relative_error(weighted, g_large) < 1e-6
# why 68.1%: plain - g_B = 0.21 (g_4 - the mean of the rest); the ratio and the next four batches' misses
assert [round(c, 2) for c in coef] == [-0.07, -0.07, -0.07, 0.21] and identity < 1e-6, (coef, identity)
assert f"{norm(stray) / norm(g_large):.2f}" == "3.24"
assert f"{coef[3] * norm(stray) / norm(g_large):.1%}" == "68.1%"
assert f"{misses[0]:.1%}" == "68.1%" and len(misses) == 5, misses  # this batch, then the next four
assert ", ".join(f"{m:.1%}" for m in misses[1:]) == "66.9%, 72.6%, 74.9%, 56.4%", misses
# the yardstick: the plain mean's effective batch, and how far each is off the 4,000 digits' gradient
assert f"{1 / np.sum(w_j ** 2):.1f}" == "46.5" and abs(w_j.sum() - 1) < 1e-12
assert [f"{np.mean(v):.0%}" for v in noise.values()] == ["79%", "116%", "124%"], noise
assert all(len(v) == 5 for v in noise.values())
assert (1 / 16) / (1 / 100) == 6.25 and abs((1 / 128) / (1 / 100) - 0.781) < 1e-3
# one update: rounding against gradlab and train_on_batch; Keras's plain mean is one SGD(0.1) step off
assert all(d < 1e-6 for d in update_diffs.values()) and len(update_diffs) == 3, update_diffs
assert keras_accum["25 + 25 + 25 + 25"] < 1e-6  # equal parts: the plain mean is n_i/B
assert abs(keras_accum["32 + 32 + 32 + 4"] - 0.1 * plain_diff) < 1e-6
assert f"{keras_accum['32 + 32 + 32 + 4']:.1e}" == "6.0e-03"
assert f"{keras_miss['32 + 32 + 32 + 4']:.1%}" == "68.1%"  # of the update's length: SGD is linear
# time, eagerly: 8 micro-batches slower than 1, yet well under 8 times (stored runs: 4.6 to 4.8)
eager, graph = times["eager"], times["tf.function"]
low, mid, high = ratio_quartiles(eager, 8, 1)
assert low > 1.5 and high < 8, (low, mid, high)
# "each pass adds about d ms whatever its size": the four medians lie near the line c + d k, d > 0
c, d = fits["eager"]
medians = [float(np.median(t)) for t in eager.values()]
assert c > 0 and d > 0 and max(abs(m - (c + d * k)) for k, m in zip(eager, medians)) < 0.35 * medians[-1]  # room for a loaded run
# in one tf.function graph: 8 micro-batches cost far less extra (stored runs: 1.0 to 1.2)
g_low, g_mid, g_high = ratio_quartiles(graph, 8, 1)
assert g_mid < 2 and g_mid < mid, ((g_low, g_mid, g_high), (low, mid, high))  # medians: robust to load
# memory: yours (or the solution) is gradlab's to the byte; what fits 16 GiB
assert per_image == memory_budget.activation_bytes_per_row(resnet)  # gradlab's estimate counts the same outputs
MiB = 2**20
assert [budget(params, per_image, 256, k) for k in (1, 2, 4, 8)] == [p["total"] for p in parts]
check_budget(budget)
assert [p["total"] < 16 * 2**30 for p in parts] == [False, False, True, True]
assert f"{per_image / MiB:.1f}" == "141.6" and f"{4 * params / MiB:.1f}" == "97.6"
assert [round(p["activations"] / MiB) for p in parts] == [36250, 18125, 9063, 4531]
assert [round(p["total"] / MiB) for p in parts] == [36641, 18613, 9551, 5019]
assert round((parts[3]["weights"] + parts[3]["gradients"] + parts[3]["optimizer"]) / MiB) == 390
assert round(parts[3]["accumulator"] / MiB) == 98 and parts[0]["accumulator"] == 0
# left out: the other 192 images, the backward gradients (6.2 MiB per image); with both, 4 need 10,060
assert f"{192 * inputs / MiB:.0f}" == "110" and f"{backward / MiB:.1f}" == "6.2"
assert f"{full4 / MiB:,.0f}" == "10,060" and full4 < 16 * 2**30
# the estimate's error in 17 (4% under to 31% over): two micro-batches might fit, four do either way
assert parts[1]["total"] / 1.31 < 16 * 2**30 < parts[1]["total"] and parts[2]["total"] / 0.96 < 16 * 2**30
# Answers 1-3
assert {n: round(100 / (3 * n), 2) for n in a1_sizes} == {50: 0.67, 30: 1.11, 20: 1.67}
assert max_abs_diff(a1_weighted, a1_large) < 1e-6 and f"{max_abs_diff(a1_plain, a1_large):.4f}" == "0.0261"
assert a2_gaps[1] == 0.0 and [f"{a2_gaps[k]:.3f}" for k in (2, 4)] == ["0.021", "0.028"], a2_gaps
assert f"{max(float(np.max(np.abs(g))) for g in a2_g):.2f}" == "0.17"
assert (round(a3_fixed), a3_micro, a3_k, gl.split_sizes(256, a3_k)) == (488, 112, 3, [86, 85, 85])
assert -(-256 // 2) == 128 > a3_micro
assert a3_full == 106 and -(-256 // a3_full) == 3 and 128 > a3_full  # with the inputs and backward gradients
# Answer 4: the plain mean against the token mean
assert (4.0 + 2.0) / 2 == 3.0 and abs((10 * 4.0 + 90 * 2.0) / 100 - 2.2) < 1e-12
# Appendix: the embedding's long sums exceed the tolerance, float64 brings the MLP to ~1e-17
assert max_abs_diff(dense["embedding"][1], dense["embedding"][2]) > 1e-6
assert max_abs_diff(dense64["mlp"][1], dense64["mlp"][2]) < 1e-12
assert row == 0 and row_terms == 61_626, (row, row_terms)
assert round(1e-6 / (np.finfo(np.float32).eps * 0.077)) == 109 and 2**-23 / 2**-52 == 2**29
