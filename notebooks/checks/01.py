"""Lesson 01's authors' checks: every number its prose states, re-checked on each run.

Run by the lesson's last cell (`%run -i checks/01.py`) in the notebook's namespace; each assert
fails loudly (nbval, `make notebooks`) if a run ever disagrees with the text. Float32 rounding
(about 1e-8) is checked as a bound, not digits, so another machine passes. Not part of the lesson.
"""
import numpy as np

from gradlab.lessons import miss, spacings, verdict

# Digits that hang on the order of float32 additions are pinned as the solutions make them (the stored run);
# once a learner's functions pass their checkers, they add in their own order, so the same numbers are held
# to what any correct code gives: the checkers' bound, and a few spacings, not the solutions' digits.
SOLUTIONS = (loss_and_grads is solution_loss_and_grads and accumulated_grads is solution_accumulated_grads
             and divide_once is solution_divide_once)


def pinned(got, expected):  # the solutions' digits, or nothing more than the bounds around this call
    assert not SOLUTIONS or got == expected, (got, expected)


# Average the means: 6.0 against 6.5
assert means == [4.0, 9.0] and losses.mean() == 6.0 and np.mean(means) == 6.5
assert float(np.dot(weights([3, 2]), means)) == 6.0 and list(weights([3, 2])) == [0.6, 0.4]
# the yardstick (the tools cell): the 96 losses added one by one in 5 orders, float32, land up to 2 spacings apart
assert len(order_sums) == 5 and all(np.asarray(s).dtype == np.float32 for s in order_sums)
assert f"{(max(order_sums) - min(order_sums)) / np.spacing(max(order_sums)):.0f}" == "2", order_sums
# "then their gradients, in five orders: up to ... 5 spacings apart, the gradients' counted at g_B's largest entry":
# the yardstick's ten covers the quantity it judges (float32 sums of the 96 per-example gradients, / 96)
assert per_grads.shape == (96, 203_530) and per_grads.dtype == np.float32 and len(grad_means) == 5
assert all(m.dtype == np.float32 for m in grad_means) and top_B == max(float(np.abs(g).max()) for g in g_B)
_grad_sp = grad_spread / np.spacing(np.float32(top_B))
assert f"{_grad_sp:.0f}" == "5" and 2 < _grad_sp < 10, _grad_sp
_flat_B = np.concatenate([g.numpy().ravel() for g in g_B])  # each order's mean is g_B to rounding
assert all(float(np.abs(m - _flat_B).max()) / np.spacing(np.float32(top_B)) < 10 for m in grad_means)
# the proof on 96 digits: rounding only, entries up to 0.077; g_B from one tape equals gradlab's loss_and_grads
assert max_abs_diff(g_B, gradlab.lessons.loss_and_grads(model, loss_fn, x, y)[1]) == 0
assert all(verdict(acc[N], g_B).startswith("exact: ") for N in (4, 5))
pinned([verdict(acc[N], g_B) for N in (4, 5)], [f"exact: {d} spacings" for d in ("2.8", "3.0")])
assert all(d < 1e-6 for d in proofs.values()) and sorted(proofs) == [4, 5], proofs
assert round(max(float(np.max(np.abs(g))) for g in g_B), 3) == 0.077
# the course's yardstick: one spacing is np.spacing(np.float32(x)) at the largest value compared, 0.077: 2^-27
assert f"{top:.3f}" == "0.077" and spacing_top == float(np.spacing(np.float32(top))) == 2.0 ** -27
assert f"{spacing_top:.1e}" == "7.5e-09"
assert all(d / spacing_top < 10 for d in proofs.values()), proofs  # a few spacings, under ten: rounding
pinned([f"{d / spacing_top:.1f}" for d in proofs.values()], ["2.8", "3.0"])
# verdict's three lines: "exact" within ten spacings; past ten, a miss under 100 eps (2^-23, float32's spacing at 1)
# prints "not exact: k spacings, m eps (rerun in float64)", from 100 eps up "miss" (01's prose states the first and
# the last, "exact: 2.8 spacings" and the miss; the middle case is 22's)
_eps = 2.0 ** -23
assert float(np.spacing(np.float32(1))) == _eps
assert verdict([np.array([1 + 10 * _eps])], [np.array([1.0])]) == "exact: 10.0 spacings"
assert verdict([np.array([1 + 99 * _eps])], [np.array([1.0])]) == "not exact: 99 spacings, 99.0 eps (rerun in float64)"
assert verdict([np.array([1 + 101 * _eps])], [np.array([1.0])]).startswith("miss ")
# split_sizes, offsets, weights and micro_batches, given in the lesson, are gradlab's
for _B, _N in CASES + ((100, 4), (7, 7), (5, 1)):
    _s = gl.split_sizes(_B, _N)
    assert split_sizes(_B, _N) == _s
    assert offsets(_s) == gradlab.lessons.offsets(_s) and np.array_equal(weights(_s), gradlab.lessons.weights(_s))
    _xs, _ys = mnist.x_train[:_B], mnist.y_train[:_B]
    _mine, _theirs = micro_batches(_xs, _ys, _N), gl.micro_batches(_xs, _ys, accum_steps=_N)
    assert len(_mine) == len(_theirs) == _N
    assert all(np.array_equal(a, b) for m, t in zip(_mine, _theirs) for a, b in zip(m, t)), (_B, _N)
# divide once: equal to the n_i/B weighting, a few spacings (2.5 and 2.0)
assert all(d < 1e-6 for d in once.values()) and sorted(once) == [4, 5], once
assert all(d / spacing_top < 10 for d in once.values()), once
pinned([f"{d / spacing_top:.1f}" for d in once.values()], ["2.5", "2.0"])
# the plain mean: 68.1% off on this split of 100 digits; the weighted sum rounding only:
# 3.0 spacings at the largest entry of g_B on these 100 digits, 0.0775, like the proof's 2.8 and 3.0
assert spacings(weighted, g_large) <= 10, spacings(weighted, g_large)
pinned(f"{spacings(weighted, g_large):.1f}", "3.0")
assert f"{relative_error(plain, g_large):.1%}" == "68.1%"
pinned(f"{relative_error(weighted, g_large):.1e}", "1.4e-07")
assert abs(relative_error(plain, g_large) - miss(plain, g_large)) < 1e-6 and verdict(plain, g_large) == "miss 68.1%"
pinned(verdict(weighted, g_large), "exact: 3.0 spacings")
assert verdict(weighted, g_large).startswith("exact: ")
assert relative_error(weighted, g_large) / np.finfo(np.float32).eps < (1.5 if SOLUTIONS else 10)
assert relative_error(weighted, g_large) < 1e-6
# the mean-of-means miss (the displayed formula): plain - g_B = sum_i (1/N - n_i/B) g_i on 32 + 32 + 32 + 4
_miss = [tf.add_n([(1 / len(sizes) - w) * g for w, g in zip(weights(sizes), gs)]) for gs in zip(*micro)]
assert sizes == [32, 32, 32, 4] and max_abs_diff([u - v for u, v in zip(plain, g_large)], _miss) < 1e-6
# the plain mean's per-example weights: 1/4 x 1/4 = 1/16 for each of the last 4, 1/128 for the rest; they add to 1,
# so shuffled, each digit counts 1/100 on average
_per_example = np.repeat(1 / (len(sizes) * np.array(sizes)), sizes)
assert _per_example[0] == 1 / 128 and _per_example[-1] == 1 / 16 == (1 / 4) * (1 / 4) and len(_per_example) == 100
assert abs(_per_example.sum() - 1) < 1e-12 and abs(_per_example.mean() - 1 / 100) < 1e-12
# shuffled, a digit lands in the short part with chance 4/100 = 0.04: 0.96 x 1/128 + 0.04 x 1/16 = 1/100
assert sizes[-1] / sum(sizes) == 0.04 and abs(0.96 / 128 + 0.04 / 16 - 1 / 100) < 1e-15
# "This split is extreme: its last part is an eighth the size of the others" (4 against 32)
assert sizes[:3] == [32] * 3 and 8 * sizes[-1] == sizes[0]
# the figure's factors, both stated beside it: ×6.25 (1/16 against 1/100) and ×0.781 (1/128 against 1/100)
assert (1 / 16) / (1 / 100) == 6.25 and abs((1 / 128) / (1 / 100) - 0.781) < 1e-3
# one update (the Predict): yours exact against train_on_batch ("1.0 spacing"); the plain mean of the same
# 34 + 33 + 33 misses by 1.02%, printed
assert split_sizes(100, 3) == [34, 33, 33] and list(updates) == ["yours, 34 + 33 + 33", "their plain mean"]
_verdicts = {name: verdict(w, theirs, start=start) for name, w in updates.items()}
assert _verdicts["yours, 34 + 33 + 33"].startswith("exact: "), _verdicts
pinned(_verdicts["yours, 34 + 33 + 33"], "exact: 1.0 spacings")
assert _verdicts["their plain mean"] == "miss 1.02%", _verdicts
assert max_abs_diff(updates["yours, 34 + 33 + 33"], theirs) < 1e-6 and max_abs_diff(start, theirs) > 1e-4
# the error formula on 34 + 33 + 33: plain - g_B = (g_B - g_1) / 99, and g_1 lies about as far from g_B as g_B is long
_gB3 = [tf.add_n([n / 100 * g for n, g in zip([34, 33, 33], gs)]) for gs in zip(*parts)]
_err3 = [tf.add_n(gs) / 3 - b for gs, b in zip(zip(*parts), _gB3)]
assert max_abs_diff(_err3, [(b - g) / 99 for b, g in zip(_gB3, parts[0])]) < 1e-7
assert 0.9 < relative_error(parts[0], _gB3) < 1.1, relative_error(parts[0], _gB3)
assert f"{relative_error(parts[0], g_B100):.2f}" == "1.01", relative_error(parts[0], g_B100)  # "1.01 times its length"
# "so the miss is 1.01/99 = 1.02%, the printed miss": the formula's error is the update's miss, to rounding
assert g1_off == relative_error(parts[0], g_B100) and f"{g1_off / 99:.2%}" == "1.02%"
assert abs(g1_off / 99 - miss(updates["their plain mean"], theirs, start=start)) < 1e-4
# the plain mean's effective batch (Kish's, the shuffles' fold): 1 / sum_j w_j^2 = 1 / (96/128^2 + 4/16^2) = 46.5 digits
_eff_batch = 1 / np.sum(_per_example ** 2)  # an even batch of B weighs each 1/B, and gives B
assert abs(_eff_batch - 1 / (96 / 128 ** 2 + 4 / 16 ** 2)) < 1e-9 and f"{_eff_batch:.1f}" == "46.5"
assert abs(1 / np.sum(np.full(100, 1 / 100) ** 2) - 100) < 1e-9
# Answer 1: one micro-batch is g_B bit for bit ("0 spacings", verdict's "bit for bit"); two and four miss by 18.7% and 30%
assert spacings(a1_acc[1], a1_g) <= 10, spacings(a1_acc[1], a1_g)  # rounding at most, whatever code
pinned(spacings(a1_acc[1], a1_g), 0.0)
pinned(verdict(a1_acc[1], a1_g), "exact: 0 spacings, bit for bit")
assert [verdict(a1_acc[N], a1_g) for N in (2, 4)] == ["miss 18.7%", "miss 30%"], [miss(a1_acc[N], a1_g) for N in (2, 4)]
# Answer 2 (its run cell prints both): the plain mean 3.0 against the token mean 2.2
assert a2_plain == (4.0 + 2.0) / 2 == 3.0 and abs(a2_tokens - 2.2) < 1e-12
assert f"{a2_plain:.1f}" == "3.0" and f"{a2_tokens:.1f}" == "2.2"
# noise, not bias (the cell after the two Predicts): the average of K shuffles' plain means closes in on g_B about as 1 / sqrt(K):
# 64.3%, 17.9%, 6.0% at K = 1, 10, 100 (the cell prints them)
assert [f"{shuffled[K]:.1%}" for K in (1, 10, 100)] == ["64.3%", "17.9%", "6.0%"], shuffled
assert all(0.5 < shuffled[K] * np.sqrt(K) / shuffled[1] < 1.5 for K in (10, 100)), shuffled
assert shuffled[1] > shuffled[10] > shuffled[100]
# "each tenfold K divides the miss by 3.6, then 3.0, near the sqrt(10) = 3.16 of noise shrinking as 1/sqrt(K)"
assert [f"{shuffled[1] / shuffled[10]:.1f}", f"{shuffled[10] / shuffled[100]:.1f}", f"{np.sqrt(10):.2f}"] == ["3.6", "3.0", "3.16"], shuffled
# the plain mean's 4 small parts each over six times their share, 1/16 against 1/100
assert (1 / 16) / (1 / 100) > 6
# the opening's pointer to lesson 11: four micro-batches cut the memory budget of one update of 11's MLP (B = 1024,
# SGD, float32) from 34.91 to 22.04 MiB (11's budget, fixed: gradlab's memory_budget, which 11's checks pin too)
from gradlab.lessons import memory_budget as _mb, recompute as _rc
_mlp11 = _rc.block_mlp()
_rows11 = dict(activation_bytes_per_row=_mb.activation_bytes_per_row(_mlp11), input_bytes_per_row=4 * 784,
               backward_bytes_per_row=_mb.backward_bytes_per_row(_mlp11))
assert [round(_mb.budget(_mlp11.count_params(), "sgd", B=1024, N=_N, **_rows11)["total"] / 2**20, 2)
        for _N in (1, 4)] == [34.91, 22.04], _rows11
# the opening: a 1B GPT (11's Problem 4) holds "about 186 GiB of activations" for 64 sequences, "over twice an 80 GB
# H100"; "four micro-batches of 16 hold 46 GiB" (the cell after the setup prints both)
assert (tokens, width, layers, vocab) == (2048, 2048, 16, 51_200)
assert f"{64 * seq_gib:.0f}" == "186" and f"{16 * seq_gib:.0f}" == "46" and 64 * seq_gib * 2**30 > 2 * 80e9
# "186 GiB (200 GB)"; attention's tokens x tokens matrices are left out (FlashAttention-style kernels keep none):
# stored, Korthikanti et al.'s 5 a s / h a layer is 80 with 16 heads, printed "with attention's matrices stored: 506 GiB"
assert f"{64 * seq_gib * 2**30 / 1e9:.0f}" == "200" and heads == 16 and 5 * heads * tokens / width == 80
assert f"{64 * (seq_gib + attn_gib):.0f}" == "506" and abs(attn_gib - 80 * tokens * width * layers / 2**30) < 1e-9
# Kish, measured (the fold after the shuffles): 1/(96/128^2 + 4/16^2) = 46.5, so 100/46.5 = 2.15 predicted; 200 random
# batches of 100 from the 4,000 give 2.11
assert len(sq_err["plain"]) == len(sq_err["weighted"]) == 200 and g_all.shape == (203_530,)
assert f"{kish_n:.1f}" == "46.5" and f"{100 / kish_n:.2f}" == "2.15"
assert f"{kish_ratio:.2f}" == "2.11" and abs(kish_ratio / (100 / kish_n) - 1) < 0.1, kish_ratio
print("lesson 01: every number the prose states checks out")

# c22: "(one spacing at the largest weight, printed)": verdict's spacings count at the largest of Keras's weights
assert top_w == max(float(np.abs(w).max()) for w in theirs) and 0.1 < top_w < 0.2, top_w
# c22's derivation for 34 + 33 + 33: (1/3 - 34/100) = -1/150, (1/3 - 33/100) = 1/300, and substituting
# g_2 + g_3 = (100 g_B - 34 g_1)/33 gives (g_B - g_1)/99
from fractions import Fraction as _Fr
assert _Fr(1, 3) - _Fr(34, 100) == _Fr(-1, 150) and _Fr(1, 3) - _Fr(33, 100) == _Fr(1, 300)
assert -_Fr(1, 150) - _Fr(1, 300) * _Fr(34, 33) == -_Fr(1, 99) and _Fr(1, 300) * _Fr(100, 33) == _Fr(1, 99)
_g2g3 = [sum(p[i] for p in parts[1:]) for i in range(len(parts[0]))]
_err = [a / 3 + b / 3 - c for a, b, c in zip(parts[0], _g2g3, g_B100)]  # the plain mean minus g_B
assert max(float(np.abs(np.asarray(e) - (np.asarray(c) - np.asarray(a)) / 99).max())
           for e, a, c in zip(_err, parts[0], g_B100)) < 1e-6
