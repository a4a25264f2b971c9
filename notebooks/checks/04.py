"""The authors' checks of lesson 04 (not part of the lesson): each re-checks a number or claim the
prose states, over the notebook's names, and fails loudly if a run ever disagrees with the text.

Run by the lesson's last code cell as `%run -i checks/04.py`; it reuses the notebook's names
(`proofs`, `adam_gap`, `curves`, `budget_figure`, ...), and pins what the answer cell prints.
"""
import numpy as np
from gradlab.lessons import memory_budget

eps32 = float(np.finfo(np.float32).eps)  # u = 2^-23, float32's spacing at 1
assert f"{eps32:.1e}" == "1.2e-07"

# The toy accumulator ends at the large batch's mean 5.5, applied once at rate 0.1
assert abs(sum(contributions) - 5.5) < 1e-6 and abs(float(theta.numpy()) + 0.55) < 1e-6, contributions

# Your TF2 loop: sums, divided once by B, applied once: "one float32 spacing at the largest weight" eager, and
# its miss 5.6e-07 "a few times float32's epsilon"; two traces (16 and 15 rows)
assert accumulate in (my_accumulate, solution_accumulate)
eager_miss = distance(eager_weights, keras_B)
assert f"{eager_miss:.1e}" == "5.6e-07" and 1 < eager_miss / eps32 < 10, eager_miss
assert 0 < spacings(eager_weights, keras_B) <= 1 and f"{spacings(eager_weights, keras_B):.1f}" == "1.0"
assert compiled.experimental_get_tracing_count() == 2 and int(optimizer.iterations) == 3

# Divide once, by the count: on 16 + 16 + 16 + 15 the sums over B land one spacing at the largest weight from the
# large batch; the means over N miss by 2.1% (lesson 06 quotes it), and so does Keras's gradient_accumulation_steps
# (it averages the micro-batches' means); the recipe's sum (not divided) steps N = 4 times as far (the TF1 cell)
assert 0 < spacings(split_after["sums / B"], keras63) <= 1
for label in ("means / N", "Keras, gradient_accumulation_steps=4"):
    miss = distance(split_after[label], keras63)
    assert f"{miss:.1e}" == "2.1e-02" and f"{miss:.1%}" == "2.1%", (label, miss)
    assert spacings(split_after[label], keras63) > 100, label  # far beyond rounding
assert max_abs_diff(split_after["means / N"], split_after["Keras, gradient_accumulation_steps=4"]) < 1e-6
assert abs(step_length(keras_start, one_update(4, 1)) / step_length(keras_start, keras_B) - 4) < 1e-3

# Adam(epsilon) fed the sum 4 g_B is Adam(epsilon / 4) fed the mean g_B, bit for bit (4 = 2^2);
# Problem 2: at N = 3 not bit for bit, but within one spacing at the largest weight
assert adam_gap == 0 and f"{adam_gap:.1e}" == "0.0e+00", adam_gap
assert 0 < adam_gap_3 and f"{adam_gap_3:.1e}" == "1.5e-08", adam_gap_3  # one spacing: checked below

# Training: the mean retraces N = 1; the sum trains faster at N = 4. At N = 16 it overshoots (one update's loss
# 21.0) and over updates 31-60 averages 2.30, over three times N = 1's 0.68, dipping as low as 1.46, yet still
# learning: its mean over 46-60 is below its mean over 31-45 (not a plateau at chance)
late = {label: float(np.mean(losses[30:])) for label, losses in curves.items()}
assert max(abs(u - v) for u, v in zip(curves["mean, N = 16"], curves["N = 1"])) < 1e-4
assert late["sum, N = 4"] < late["N = 1"] < late["sum, N = 16"] and late["sum, N = 16"] > 3 * late["N = 1"], late
assert [f"{late[k]:.2f}" for k in ("N = 1", "sum, N = 4", "sum, N = 16", "mean, N = 16")] == \
    ["0.68", "0.46", "2.30", "0.68"], late
assert f"{max(curves['sum, N = 16']):.1f}" == "21.0" and max(curves["sum, N = 16"]) > 4 * np.log(10)
c16 = curves["sum, N = 16"][30:]  # the shaded updates at N = 16
assert np.mean(c16[15:]) < np.mean(c16[:15]) and min(c16) < np.log(10), c16  # still falling; below a uniform guess
assert [f"{np.mean(c16[:15]):.2f}", f"{np.mean(c16[15:]):.2f}", f"{min(c16):.2f}"] == ["2.64", "1.96", "1.46"], c16

# Every route equals Keras's large batch to float32 rounding: within one spacing at the largest weight, 0.16
assert len(runs) == 4 and all(d < 1e-6 for d in proofs.values())
w_max = max(float(np.abs(v).max()) for v in keras_B + keras_3 + keras63)
gap = float(np.spacing(np.float32(w_max)))
assert max(proofs.values()) <= gap and f"{gap:.1e}" == "1.5e-08" and f"{w_max:.2f}" == "0.16", (proofs, gap, w_max)
assert f"{max(proofs.values()):.1e}" == "1.5e-08" and adam_gap_3 <= gap  # Problem 2: one spacing at the largest weight
W = sum(int(np.prod(v.shape)) for v in gradlab_weights)
differ = sum(int((g != h).sum()) for g, h in zip(gradlab_weights, hand_weights))
assert 0 < differ / W < 0.05, differ
assert W == 203_530

# gradlab's guard: the all-NaN digit's update raised FloatingPointError and changed nothing (3 updates before it)
# (the loss is finite because Grappler's remapper fuses MatMul + BiasAdd + Relu on the CPU, which outputs 0 for a
# NaN row; with remapping off, or eager, the loss is NaN, checked by hand in r138; x^T delta keeps the NaN)
assert isinstance(caught, FloatingPointError) and "skipped" in str(caught), caught
# "the loss stayed finite: on this CPU the compiled forward pass ... outputs 0 for the NaN row, where the eager ReLU
# keeps all 256 NaNs"; on another platform the loss may be NaN, and the guard catches either (its message says which)
assert nan_outputs["eager"] == 256 and nan_outputs["compiled"] in (0, 256), nan_outputs
assert (nan_outputs["compiled"] == 0) == str(caught).startswith("the loss is finite"), (nan_outputs, caught)
if not tf.config.list_physical_devices("GPU"):  # the prose's claim is about the CPU
    assert nan_outputs["compiled"] == 0 and "but the gradient of this update is not finite" in str(caught), caught
assert unchanged and int(strategy.optimizer.iterations) == 3

# The budget (with gradlab's backward term t), the MLP only: your budget is gradlab's, the break-even, the figure's crossing
assert (P_mlp, a_mlp, t_mlp) == (W, 4 * 1306, 4 * 512) and pays == 150  # t: the ReLU's input and output gradients
assert budget_figure.break_even == pays
assert f"{48 * (a_mlp + t_mlp) / 2**20:.2f}" == "0.33" and (B, N) == (64, 4)
for n, total in ((1, one), (N, acc)):
    assert total == memory_budget.budget(P_mlp, "sgd", B, n, activation_bytes_per_row=a_mlp,
                                         backward_bytes_per_row=t_mlp)["total"]
assert one < acc and [f"{v / 2**20:.2f}" for v in (one, acc)] == ["2.00", "2.44"], (one, acc)
assert f"{4 * P_mlp / 2**20:.2f}" == "0.78"  # the MLP's accumulators, MiB
assert all(budget(P_mlp, a_mlp, 64, n, t=t_mlp) > one for n in (2, 4, 8, 16, 32))  # "every N > 1 needs more"
assert (a_hand, t_hand) == (a_mlp, t_mlp) == (4 * (784 + 256 + 256 + 10), 2_048)  # the count by hand is gradlab's

# How the 2017 texts did it: the TF1 recipe as written (SGD) steps 4.0000 times as far, as the TF2 sum of means
assert f"{tf1_ratio:.4f}" == "4.0000" and max_abs_diff(recipe_after, one_update(4, 1)) < 1e-6, tf1_ratio
# "six sess.run calls" an update, counted: one zero, four accumulates (one per micro-batch), one apply
assert len(calls) == 6 == 1 + len(np.split(x, 4)) + 1, len(calls)

# The answer: not zeroed, the second update applies g(1) + g(2), each its batch's mean gradient; 1.06 |g(2)| left over
assert max_abs_diff(acc_2, [u + v for u, v in zip(acc_1, g_next)]) < 1e-6
leftover = np.linalg.norm(flat(acc_2) - flat(g_next)) / np.linalg.norm(flat(g_next))
assert f"{leftover:.2f}" == "1.06", leftover
print("lesson 04: every number the prose states checks out")
