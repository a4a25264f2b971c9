"""The authors' checks of lesson 17 (17-the-lab.ipynb), not part of the lesson.

Run by the lesson's last cell with `%run -i`, over the notebook's names: it re-checks every number the
prose states against the run the notebook just made, and fails loudly where a run disagrees with the
text."""
import numpy as np

# Hold the effective batch: yours and gradlab's agree; float32 rounding; no accuracy change
assert mine == worst < 1e-5 and np.isclose(paired(accumulated, large).mean(), 100 * accuracy_change)
assert np.all(paired(accumulated, large) == 0) and len(accs) == 3
assert f"{mine:.1e}" == "7.2e-07" and acc_by_seed == [0.0] * 3  # every seed's final accuracy the same
assert [r.config.seed for r in large.results] == [0, 1, 2]
# your three-seed loop (the solution here) trains the lab's runs, loss for loss and accuracy for accuracy
assert yours_vs_lab == 0.0 and acc_vs_lab == 0.0, (yours_vs_lab, acc_vs_lab)
assert loss_fused.shape == loss_large.shape == (3, 150)
# the answer: every update of every seed within nine float32 spacings at the larger loss; the largest gap 7.2e-07
assert round(most) == 9 and most < 10 and all(len(spacings(a.losses, b.losses)) == 150 for a, b in seeds), most

# the four settings
sigma = accs.std(ddof=1)  # the seeds' spread at B = 100: 0.78


def change(group):  # final accuracy against the large batch, seed by seed, in points
    return np.array([100 * (r.accuracy - group.reference[r.config.seed].accuracy) for r in group.results])


exact = ("cosine lr schedule", "uneven micro-batches", "clip each micro-batch")
ways = {s: measured[s][1:] for s in measured}  # (gradlab's, the other way) of each setting
exact_gaps = {s: [float(np.abs(r.losses - ways[s][0].reference[r.config.seed].losses).max())
                  for r in ways[s][0].results] for s in exact}
# the answer's loss gaps to the large batch: schedule 8.3e-07, uneven 2.7e-07, clipping 4.3e-03 (seed 1)
assert [f"{max(exact_gaps[s]):.1e}" for s in exact] == ["8.3e-07", "2.7e-07", "4.3e-03"], exact_gaps
assert np.all(np.abs(change(ways["cosine lr schedule"][0])) < 0.05)
keras_cosine = ways["cosine lr schedule"][1]
assert round(keras_cosine.difference()[1], 2) == 0.62 and np.all(change(keras_cosine) < -4 * sigma), change(keras_cosine)
assert [round(c, 1) for c in (change(keras_cosine).max(), change(keras_cosine).min())] == [-4.2, -5.3]
assert keras_cosine.results[0].config.updates == 150 and round(150 / 4) == 38  # "four times early"
# the clip setting written out (cell 8): gradlab's clipped sum is 1.00 long, the mean of the four clipped micro-batch
# gradients 0.71 ("four gradients clipped to length 1": every micro-batch's norm exceeds the clip); each written-out
# update is what the lab's step applied, to float32 rounding
assert [f"{written[k][0]:.2f}" for k in ("update", "micro")] == ["1.00", "0.71"], written
assert all(written[k][1] < 1e-6 for k in written), written
_m, _r = run_strategy(clip_config).model, sample_order(clip_config)[0]
for _x, _y in zip(np.split(mnist.x_train[_r], 4), np.split(mnist.y_train[_r], 4)):
    with tf.GradientTape() as _tape:
        _l = loss_fn(_y, _m(_x, training=True))
    assert float(tf.linalg.global_norm(_tape.gradient(_l, _m.trainable_variables))) > 1.0
# Keras's schedule traced: update 37 still reads a rate (step 147 of 150), update 38 reads 0 ("0 from update 38")
assert len(moves) == 152 and f"{moves[4 * 37 - 1]:.1e}" == "4.9e-04" and moves[4 * 38 - 1] == 0.0, moves[-8:]
assert all(m == 0 for k, m in enumerate(moves) if k % 4 != 3)  # only the 4th micro-batch of an update moves it
assert f"{change(keras_cosine).mean():.1f} ± {change(keras_cosine).std(ddof=1):.1f}" == "-4.8 ± 0.6"
uneven, (bn_window, bn_micro), clip_each = (change(ways["uneven micro-batches"][1]), [change(g) for g in ways[
    "BatchNorm, statistics per micro-batch"]], change(ways["clip each micro-batch"][1]))
assert abs(uneven.mean()) < 0.1 and np.all(np.abs(uneven) < 0.1 + 1e-9)  # inside the yardstick
assert round(ways["uneven micro-batches"][1].difference()[1], 2) == 0.05
assert np.all(np.abs(clip_each) > 0.5) and clip_each.min() < 0 < clip_each.max()  # every seed moves, either sign
assert [round(c, 1) for c in sorted(np.abs(clip_each))][::2] == [0.6, 0.7], clip_each
assert np.all(bn_micro > 0.1) and np.all(bn_micro > bn_window)  # per micro-batch: above in every seed
assert np.sum(bn_window > 0.1 + 1e-9) == 2 and np.all(np.abs(clip_each) > 0.1 + 1e-9)  # beyond the yardstick
assert np.all(np.abs(keras_cosine_change := change(keras_cosine)) > 0.1 + 1e-9) and np.all(np.abs(uneven) <= 0.1 + 1e-9)
assert f"{bn_micro.mean():.1f} ± {bn_micro.std(ddof=1):.1f}" == "0.7 ± 0.3" and np.all(bn_micro > 0)  # beats, every seed
assert f"{bn_window.mean():+.1f} ± {bn_window.std(ddof=1):.1f}" == "+0.2 ± 0.3"
assert [f"{c:+.1f}" for c in bn_window] == ["+0.2", "+0.0", "+0.5"]  # window by seed: within noise (p = 0.2)
assert len(mnist.x_train) == 4000 and len(mnist.x_test) == 1000  # one test digit is 0.1 points
assert round(ways["clip each micro-batch"][1].difference()[1], 2) == 0.25

# BatchNorm, why: the runs kept are the lab's, every seed; per micro-batch's statistics nearer the true ones
for way, g in zip(bn_runs, measured["BatchNorm, statistics per micro-batch"]):  # large batch, window, per micro
    assert [r.config.seed for r in g.results] == [0, 1, 2] and bn_runs[way].shape == (3, 4), way
    assert np.array_equal(bn_runs[way][:, 2], [100 * r.accuracy for r in g.results]), (way, bn_runs[way])
assert np.all(bn_runs["per micro-batch"][:, :2] < bn_runs["window"][:, :2])
assert np.all(bn_runs["per micro-batch"][:, :2] < bn_runs["large batch"][:, :2])
# the large batch's moving variance 82 to 86 % off (cell 19's print): per micro-batch's statistics "settle sooner"
assert [f"{x:.0%}" for x in (bn_runs["large batch"][:, 1].min(), bn_runs["large batch"][:, 1].max())] == ["82%", "86%"]
# per micro-batch: variance 5 to 6 % off, mean 14 to 17 %; the large batch's mean 30 % (every seed)
assert [f"{x:.0%}" for x in (bn_runs["per micro-batch"][:, 1].min(), bn_runs["per micro-batch"][:, 1].max())] == ["5%", "6%"]
assert [f"{x:.0%}" for x in (bn_runs["per micro-batch"][:, 0].min(), bn_runs["per micro-batch"][:, 0].max())] == ["14%", "17%"]
assert {f"{x:.0%}" for x in bn_runs["large batch"][:, 0]} == {"30%"}
# per micro-batch - large batch: 0.6, 0.5, 1.1 points as trained (+0.7); 0.1, 0.1, 0.4 with the true statistics (+0.2)
assert np.array_equal(gain, bn_runs["per micro-batch"] - bn_runs["large batch"])
assert [f"{x:.1f}" for x in gain[:, 2]] == ["0.6", "0.5", "1.1"] and f"{gain[:, 2].mean():+.1f}" == "+0.7", gain
assert [f"{x:.1f}" for x in gain[:, 3]] == ["0.1", "0.1", "0.4"] and f"{gain[:, 3].mean():+.1f}" == "+0.2", gain
assert np.all(gain[:, 3] < 0.5 * gain[:, 2])  # in every seed fresher statistics made most of the gain
assert [f"{x:.1f}" for x in bn_runs["window"][:, 3]] == [f"{x:.1f}" for x in bn_runs["per micro-batch"][:, 3]] == ["94.2", "95.0", "93.9"]
assert f"{0.99 ** 150:.2f}" == "0.22" and f"{0.99 ** 600:.4f}" == "0.0024" and f"{0.99 ** 4:.2f}" == "0.96"
for s in measured:  # your paired differences are gradlab's, seed by seed and on average
    for g in measured[s][1:]:
        assert np.allclose(paired(g, measured[s][0]), change(g)) and np.isclose(change(g).mean(), 100 * g.difference()[2])


# clipping once, seed 1 (the fold): it parts by 4.3e-03 in float32, stays within 3.3e-16 in float64; seeds 0 and 2
# within 4.8e-07; the controls (accumulate, fused without XLA) stay at rounding
assert [f"{d:.1e}" for d in by_seed] == ["2.4e-07", "4.3e-03", "4.8e-07"] and f"{max(by_seed[0], by_seed[2]):.1e}" == "4.8e-07"
assert f"{clip_gap['float32']:.1e}" == "4.3e-03" and f"{clip_gap['float64']:.1e}" == "3.3e-16"
assert max(controls) < 1e-6 < 1e-3 < by_seed[1], controls
assert [f"{c:.1e}" for c in controls] == ["2.4e-07", "2.4e-07"], controls  # "2.4e-07 ... clipping without XLA"

# What mattered: paired gaps by seed and their 95% intervals (the table)
assert list(gaps) == ["Keras's schedule", "Keras's 1/N, uneven", "clip each micro-batch", "BatchNorm per micro-batch",
                      "BatchNorm window"]
assert np.allclose(gaps["BatchNorm per micro-batch"], bn_micro) and np.allclose(gaps["Keras's schedule"], keras_cosine_change)
assert [f"{x:+.1f}" for x in gaps["BatchNorm per micro-batch"]] == ["+0.6", "+0.5", "+1.1"]
_ivs = {k: seed_gaps.interval(d) for k, d in gaps.items()}  # (mean, half-width) a row
_iv = {k: "{:+.1f} ± {:.1f}".format(*iv) for k, iv in _ivs.items()}
assert [_iv[k] for k in list(gaps)[:4]] == ["-4.8 ± 1.4", "+0.0 ± 0.3", "+0.2 ± 1.8", "+0.7 ± 0.8"], _iv
_holds0 = {k: abs(mean) <= half for k, (mean, half) in _ivs.items()}
# your paired interval (the solution's here) is gradlab's seed_gaps.interval, row by row
assert iv_diff < 1e-9 and all(np.allclose(yours_iv[k], _ivs[k]) for k in gaps), iv_diff
assert _holds0 == {"Keras's schedule": False, "Keras's 1/N, uneven": True, "clip each micro-batch": True,
                   "BatchNorm per micro-batch": True, "BatchNorm window": True}, _holds0  # only the schedule is told from 0

# After the core: the checklist on the convnet; checks 1, 2 and 4 within a few eps (rounding), Dropout about 2 %
assert grad_norm > 0.5, grad_norm  # the clip acts on the first update
assert all(checks[k] / 100 / eps < 10 for k in ("1, 2: count and clip", "4: two replicas")), checks
assert 1.0 < checks["5: Dropout"] < 3.0, checks  # "about 2 %"
assert (int(opts[4].iterations), int(opts[1].iterations)) == (2, 2)
assert np.isclose(float(opts[4].learning_rate), float(opts[1].learning_rate))

# The problem (the GPT): N = 4 fits (69.93 GB with t), N = 3 does not (b = 22); (b) 2.0 s, attention 13 %
assert (smallest, fit[smallest]["b"]) == (4, 16) and fit[1]["total"] - fit[1]["activations"] == 16e9
assert fit[smallest - 1]["total"] > 72e9 and fit_t[smallest - 1] > 72e9 and fit[3]["b"] == 22
assert fit[smallest]["total"] - fit[smallest]["activations"] == 20e9 and f"{a_seq / 1e9:.2f}" == "2.70"  # 72 - 20 = 52 GB for b a
assert f"{states / 1e9:.1f}" == "20.0" and states == 20e9 and f"{room / 1e9:.0f}" == "52"
assert int(room // a_seq) == 19 and 19 * a_seq <= 52e9 < 20 * a_seq  # "at most 19 sequences"
# one capacity: 72 GB, 90 % of the H100's 80 GB (GB = 1e9 bytes)
assert capacity == 72e9 == 0.9 * 80e9
assert [fit_t[n] <= 72e9 for n in (1, 2, 3, 4)] == [False] * 3 + [True]
assert f"{fit_t[smallest] / 1e9:.2f}" == "69.93" and fit[smallest]["total"] < fit_t[smallest] <= 72e9  # t counted: N = 4 fits
assert f"{flops:.1e}" == "7.9e+14" and f"{seconds:.1f}" == "2.0" and seconds == flops / (0.4 * 989e12)
assert f"{100 * attention:.0f}" == "13"
assert 64 % smallest == 0 and smallest * fit[smallest]["b"] == 64  # every micro-batch has b = 16

# two updates by fused's step are the lab's run's, bit for bit; 784-256-10 has 203,530 weights
assert two_steps == [float(x) for x in lab_run.losses[:2]] and n_weights == 203_530
# the two BatchNorm ways train with identical losses: only testing reads the moving statistics ("0.0e+00")
assert between == 0.0, between
# BatchNorm's inversion (cell 17's print): both ways end at a higher training loss than the large batch, yet score higher
assert late[1] == late[2] and late[1] > late[0] and bn_window.mean() > 0 and bn_micro.mean() > 0, late
# BatchNorm (cell 16): training loss 0.109 against 0.066; per micro-batch's moving variance 5 to 6 % off
assert [f"{late[0]:.3f}", f"{late[1]:.3f}"] == ["0.066", "0.109"], late
assert [f"{x:.0%}" for x in (bn_runs["per micro-batch"][:, 1].min(), bn_runs["per micro-batch"][:, 1].max())] == ["5%", "6%"]
# the schedule's and the uneven split's gradlab runs, in float32 spacings at the larger loss, at any update of any seed
_sp = {s: max(spacings(r.losses, ways[s][0].reference[r.config.seed].losses).max() for r in ways[s][0].results)
       for s in ("cosine lr schedule", "uneven micro-batches")}
assert [f"{v:.2g}" for v in _sp.values()] == ["8", "9"] and max(_sp.values()) < 10, _sp  # inside the course's ten
# window's moving variance 74 to 78 % off the training digits' (150 moves, as the large batch)
assert [f"{x:.0%}" for x in (bn_runs["window"][:, 1].min(), bn_runs["window"][:, 1].max())] == ["74%", "78%"]
# the Problem in the lab (its folded expected result): at N = 8, b = 12 Keras's schedule costs 7.8 to 8.5 points a seed,
# more than at N = 4 on every seed; gradlab's way matches the large batch (B = 96) on every seed
assert [g[0].config.accum_steps for g in task] == [1, 8, 8] and task[0][0].config.micro_batch == 96
assert [r.config.strategy for r in (task[0][0], task[1][0], task[2][0])] == ["large_batch", "fused", "keras"]
assert [r.config.seed for r in task[2]] == [0, 1, 2] and all(r.config.schedule == "cosine" for g in task for r in g)
assert np.all(np.abs(task_gaps[0]) < 0.05), task_gaps
assert [f"{x:.1f}" for x in (max(task_gaps[1]), min(task_gaps[1]))] == ["-7.8", "-8.5"], task_gaps
assert max(task_gaps[1]) < change(keras_cosine).min(), (task_gaps, change(keras_cosine))
print("lesson 17: every number the prose states checks out")
