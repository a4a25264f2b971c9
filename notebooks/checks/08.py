"""The authors' checks of lesson 08 (not part of the lesson): each re-checks a number or claim the
prose states, over the notebook's names, and fails loudly if a run ever disagrees with the text.

Run by the lesson's last code cell as `%run -i checks/08.py`; it reuses the notebook's names
(`x`, `y`, `make`, `mlp`, `pf`, ...) and recomputes a few small things the lesson no longer shows.
"""
import numpy as np
import keras
import tensorflow as tf

# Section 1: the target, your clip_each and clip_once, gradlab and Keras
oracle = mlp()  # the target checked: one tape over the 32 digits, clipped once
with tf.GradientTape() as tape:
    large_loss = loss_fn(y, oracle(x, training=True))
g_tape = [g.numpy() for g in tf.clip_by_global_norm(
    tape.gradient(large_loss, oracle.trainable_variables), 0.5)[0]]
assert pf.relative_error(g_clipped, g_tape) < 1e-6
helper = pf.per_micro_batch_clipped_grads(mlp(), x, y, 4, 0.5)  # your clip_each is gradlab's helper
assert pf.relative_error(g_each, helper) < 1e-5
assert pf.relative_error(g_each, g_clipped) > 0.1 and pf.relative_error(g_once, g_clipped) < 1e-5
assert min(norm([t.numpy() for t in g]) for _, g in parts) > 0.5
assert f"{pair_cos:.2f}" == "0.08" and abs(each_by_hand - norm(g_each)) < 1e-4
assert f"{cosine:.4f} {norm(g_each):.3f} {norm(g_once):.3f}" == "0.9959 0.278 0.500"
assert f"{pf.relative_error(g_each, g_clipped):.2f}" == "0.45" and 0.99 < cosine < 1.0
assert f"{pf.relative_error(g_each, g_clipped):.0%}" == "45%"  # the prose's "a miss of 45%" (section 1 and the Summary)
assert list(clip_errs) == ["host_average", "accumulate", "fused"]
assert max([*clip_errs.values(), pf.relative_error(g_once, g_clipped)]) < 1e-6
# "Keras clips the mean once (06 shows where): on equal micro-batches, the large batch's clip" (not printed here)
keras_sgd = lambda n=None: keras.optimizers.SGD(1.0, global_clipnorm=0.5, gradient_accumulation_steps=n)
keras_clip_err = pf.relative_error(pf.update_of(make("keras", 4, optimizer=lambda: keras_sgd(4)), x, y),
                                   pf.update_of(make("large_batch", optimizer=keras_sgd), x, y))
assert keras_clip_err < 1e-6, keras_clip_err
# "... and so treats its nonlinear clipnorm and clipvalue": on the mean once, the large batch's clip
unclipped = pf.update_of(make("large_batch", optimizer=lambda: keras.optimizers.SGD(1.0)), x, y)
for clip_kw in ({"clipnorm": 0.05}, {"clipvalue": 0.01}):
    keras_kw = lambda n=None: keras.optimizers.SGD(1.0, gradient_accumulation_steps=n, **clip_kw)
    clipped_large = pf.update_of(make("large_batch", optimizer=keras_kw), x, y)
    kw_err = pf.relative_error(pf.update_of(make("keras", 4, optimizer=lambda: keras_kw(4)), x, y), clipped_large)
    assert kw_err < 1e-6 and pf.relative_error(unclipped, clipped_large) > 0.1, (clip_kw, kw_err)  # and the clip bites
# lesson 01's yardstick: spacings at the largest entry; clipping once 4.2, the strategies 8.0 (under ten: rounding)
assert spacing(g_clipped) == float(np.spacing(np.float32(max(np.abs(t).max() for t in g_clipped))))
assert f"{once_gap / spacing(g_clipped):.1f}" == "4.2" and f"{pf.relative_error(g_once, g_clipped):.1e}" == "4.7e-07"
assert {f"{v:.1f}" for v in clip_spacings.values()} == {"8.0"} and max(clip_spacings.values()) < 10
# your clip_each and clip_once (or the solution) are the lesson's functions, checked in their cell
assert check_clip(clip_each, False) is None and check_clip(clip_once, True) is None

# Section 2: skip the whole update
assert sum_if_finite(micro_grads(mlp(), bad, y, 2, scale=2.0 ** 15)) is None
assert abs(not_finite - 19_000) < 500 and entries == 50_890
assert f"{micro_loss[0]:.3f}" == "2.206" and micro_loss[1] == np.inf  # micro-batch 2: inf
assert fused_row == [None, None, 1, 1, 2, 2]  # fused skips the whole window, then applies whole windows
assert f"{norm(wrong):.1e} {norm(g_clipped):.3f}" == "1.5e-05 0.500"  # clipped before unscaling
assert held_1["fused"] == 0.0 < held_1["keras"] and f"{held_1['keras']:.3f}" == "0.173"
assert held["fused"] == 0.0 < held["keras"] and f"{held['keras']:.2f}" == "0.17"
assert max(w_gap(w_after["fused"], clean), w_gap(w_after["keras"], mixed)) < 1e-6
assert f"{w_gap(w_after['keras'], clean):.3f}" == "0.012"
assert counted == [1, 1, 2, 3, 4, 5] and int(replay_lso.iterations) == 2  # the skipped apply 2 leaves it at 1
assert row == [1, None, 1, 2, 2, "held"]
assert shift_gap < 1e-6 and f"{shift_gap:.1e}" == "3.0e-08"  # each later window a micro-batch late
assert w_gap([v.numpy() for v in replay.weights], sgd_updates((x2, y2), (x3, y3))) > 1e-3  # not x2, then x3

# Section 3: the loss scale halves per overflowing micro-batch under Keras, once per update under fused
two_bad = x.copy()
two_bad[:8] *= 1e38
two_bad[24:] *= 1e38  # micro-batches 1 and 4 of 4 overflow
halved = {}  # S after one step of 4 micro-batches of 8, from 2^15
for case, bad_x in (("1 and 4", two_bad), ("all 4", x * 1e38)):
    for name, accum in (("fused", None), ("keras", 4)):
        run = make(name, 4, optimizer=lambda: keras.optimizers.LossScaleOptimizer(
            keras.optimizers.SGD(0.1, gradient_accumulation_steps=accum)))
        with warnings.catch_warnings(action="ignore"):  # gradlab's float16 note; this run is float32
            run.step(bad_x, y)
        halved[case, name] = float(run.optimizer.dynamic_scale)
assert halved == {("1 and 4", "fused"): 16384, ("1 and 4", "keras"): 8192,
                  ("all 4", "fused"): 16384, ("all 4", "keras"): 2048}
assert doubled == {"one apply per update (a plain LSO)": [2000],
                   "Keras's accumulation, N = 4": [500, 1000, 1500, 2000]}
assert fixed_doubled == [2000]  # Going further: dynamic_growth_steps=2000 * 4 restores the pace
once_s, keras_s = (scales for _n, scales in runs.values())  # the loss scale per call; fixed_s: Going further's
assert once_s[1] == halved["all 4", "fused"] == 16384 and keras_s[1:5] == [16384, 8192, 4096, 2048]
assert keras_s[4] == halved["all 4", "keras"] == fixed_s[4] == 2048 and once_s[-1] == keras_s[-1] == 32768
assert max(once_s[2:-1]) == 16384 and fixed_s[-1] == 4096 and max(fixed_s[5:-1]) == 2048  # 8x lower
# Keras is back at 2^15 by update 2,000 but spends about the first 500 clean updates 8 times lower:
# S after clean update u is at index 4 * (u + 1) (index 4 ends the bad update)
assert [keras_s[4 * (u + 1)] for u in (499, 999, 1499, 1999, 2000)] == [2048, 4096, 8192, 16384, 32768]
assert once_s[500] == 16384 and keras_s[4 * 500] == 16384 / 8
# What a lower S costs this MLP in float16: nothing flushed even at S = 1; the error is rounding
assert np.abs(g_32[g_32 != 0]).min() > 2.0 ** -24  # above float16's smallest positive number
assert [n for n, _err in flushed_16.values()] == [0, 0, 0] and list(flushed_16) == [1.0, 2048.0, 16384.0]
assert {f"{err:.1e}" for _n, err in flushed_16.values()} == {"4.0e-04"}
# the floor: float16 rounds |v| <= 2^-25 to 0 and keeps what is above; lost below 2^-25 / S, "1.5e-11 at S = 2048,
# 1.8e-12 at 16384" (the 8 times is printed, no longer stated)
assert np.float16(floor) == 0 and np.float16(floor * 1.001) > 0 and floor == 2.0 ** -25
assert f"{floor / 2048:.1e} {floor / 16384:.1e} {16384 // 2048}" == "1.5e-11 1.8e-12 8"


# Section 4: the weight average. First the exact case: 3 or 4 updates on one batch, each average
# is its own coefficients to 1e-6 and misses the other's by more than 1e-3
def short_run(name, rho, n, updates):
    run = make(name, n, optimizer=lambda: keras.optimizers.SGD(
        0.5, use_ema=True, ema_momentum=rho,
        gradient_accumulation_steps=n if name == "keras" else None))
    path = []
    for _ in range(updates):
        run.step(x, y)
        path.append([v.numpy() for v in run.model.trainable_variables])
    return path, pf.ema_weights(run)


short_miss = {}
for rho, n, updates in ((0.5, 2, 3), (0.9, 4, 4)):
    for name in ("fused", "keras"):
        path, avg = short_run(name, rho, n, updates)
        for moves in (1, n):
            c = ema_coefficients(updates, rho, moves)
            short_miss[rho, name, moves] = w_gap(
                [sum(c_k * w[v] for c_k, w in zip(c, path)) for v in range(len(avg))], avg)
    assert max(short_miss[rho, "fused", 1], short_miss[rho, "keras", n]) < 1e-6
    assert min(short_miss[rho, "fused", n], short_miss[rho, "keras", 1]) > 1e-3
once_4 = pf.expected_ema(path, 0.9)  # gradlab's helper is your coefficients, once per update
assert max(float(np.abs(a - sum(c * w[v] for c, w in zip(ema_coefficients(4, 0.9, 1), path))).max())
           for v, a in enumerate(once_4)) < 1e-6
fit_model = mlp()  # Keras's own fit, the same 4 updates of 4 micro-batches of 8: it returns the average
fit_model.compile(optimizer=keras.optimizers.SGD(0.5, use_ema=True, ema_momentum=0.9,
                                                 gradient_accumulation_steps=4), loss=loss_fn)
fit_model.fit(np.tile(x, (4, 1, 1)), np.tile(y, 4), batch_size=8, shuffle=False, verbose=0)
fit_gaps = [w_gap(fit_model.get_weights(), w) for w in (avg, path[-1])]
assert fit_gaps[0] < 1e-6 and fit_gaps[1] > w_gap(path[-1], path[-2])  # the average, not the last
# The average in training (Going further): test losses of the average, seeded, so fixed
assert {k: f"{v:.3f}" for k, v in tested.items()} == {
    (0.99, "fused"): "0.223", (0.99, "keras"): "0.204", (0.99 ** 4, "fused"): "0.204"}
# once per update at 0.99^4 (Keras's decay per update at 0.99) tests as Keras's does: the memory explains it
assert abs(tested[0.99 ** 4, "fused"] - tested[0.99, "keras"]) < 0.005
assert f"{0.99 ** 4:.4f}" == "0.9606"
# the coefficients (cell 18, ema_coefficients: a hand-written model of Keras's EMA moves, which only the test losses
# above check against Keras): Keras at 0.99 is close to once per update at 0.99^4, far from it at 0.99
assert [f"{coef_gap[r]:.3f}" for r in (0.99, 0.99 ** 4)] == ["0.935", "0.059"]
assert tested[0.99, "keras"] < tested[0.99, "fused"]  # at 0.99 Keras's shorter memory wins
seed_wins = [tested[0.99, "fused"] - tested[0.99, "keras"], *wins]  # models from seeds 1, 2, 3
assert min(seed_wins) > 0.005 and f"{min(seed_wins):.3f} {max(seed_wins):.3f}" == "0.016 0.019"

# Section 5: BatchNorm's moving statistics. One update of N calls keeps rho^N of the old moving mean and gives
# micro-batch i's mean (i = 1..N) the weight (1 - rho) rho^(N - i); the variance moves the same way
for N_bn, (kept_bn, coef_bn) in bn_moves.items():
    assert abs(kept_bn - 0.99 ** N_bn) < 1e-6
    assert np.abs(coef_bn - [0.01 * 0.99 ** (N_bn - i) for i in range(1, N_bn + 1)]).max() < 1e-6
assert f"{bn_moves[1][0]:.4f} {bn_moves[4][0]:.4f} {0.99 ** 4:.4f}" == "0.9900 0.9606 0.9606"
assert [f"{c:.4f}" for c in bn_moves[4][1]] == ["0.0097", "0.0098", "0.0099", "0.0100"]
assert f"{bn_moves[4][1].sum():.4f} {far:.2f} {(1 - 0.99 ** 4) / 0.01:.2f}" == "0.0394 3.94 3.94"
mu_bn = np.stack([h_i.mean(0) for h_i in np.split(h, 4)])
var_bn = np.stack([h_i.var(0) for h_i in np.split(h, 4)])
weights_bn = np.array([0.01 * 0.99 ** (4 - i) for i in range(1, 5)])
assert np.abs(moving_after(4)[1] - (0.99 ** 4 + weights_bn @ var_bn)).max() < 1e-6
assert var_gap < 1e-6 and np.abs(var_i - var_bn).max() == 0  # the printed line: the same weights, from 1
# Keras's accumulation in fit moves both exactly as the four calls do (printed in the lesson)
assert keras_bn_gap < 1e-6
# gradlab: "micro" is the four calls; "window" is the large batch's one move, from all B rows' moments
micro_bn = bn_model()
with warnings.catch_warnings(action="ignore"):
    gl.make_strategy("fused", micro_bn, loss_fn, keras.optimizers.SGD(0.1), accum_steps=4,
                     batchnorm="micro").step(h, y)
assert max(float(np.abs(v.numpy() - t).max()) for v, t in zip(
    (micro_bn.layers[0].moving_mean, micro_bn.layers[0].moving_variance), moving_after(4))) < 1e-6
assert [f"{g:.1e}" for g in bn_gaps["micro"]] == ["2.3e-02", "2.8e-02"]
assert max(bn_gaps["window"]) < 1e-6 and f"{max(bn_gaps['window']):.1e}" == "9.3e-10"
assert bn_four["micro"] < 1e-6 and f"{bn_four['micro']:.1e}" == "1.2e-07" and bn_four["window"] > 1e-2  # micro is four calls' moves, printed
# the given merge is the moments of all the rows, and one move from it is the large batch's
assert check_merge(merge_moments) is None and check_move_once(move_once) is None
# the given move_once: "4.7e-10 apart" from the large batch's statistics, as window's (9.3e-10)
merge_gap = w_gap(mine_bn, large_bn)
assert f"{merge_gap:.1e}" == "4.7e-10" and merge_gap < 1e-6
# the EMA figure's theta_1: 0.729 once per update, 0.387 under Keras (rho 0.9, N = 4), as the prose states
assert [f"{ema_coefficients(4, 0.9, m)[0]:.3f}" for m in (1, 4)] == ["0.729", "0.387"]
# "for rho near 1 and N = 4, the average trails by about a quarter as many updates" (Problem 1's lags)
assert all(abs((r / (1 - r ** 4)) / (r / (1 - r)) - 0.25) < 0.01 for r in (0.99, 0.999))
assert f"{0.99 / (1 - 0.99 ** 4):.2f} {0.999 / (1 - 0.999 ** 4):.2f}" == "25.12 250.12"
large_bn = moving_after(1)  # the large batch's one move: rho of the old, 1 - rho of all B rows' moments
assert max(np.abs(large_bn[0] - 0.01 * h.mean(0)).max(), np.abs(large_bn[1] - (0.99 + 0.01 * h.var(0))).max()) < 1e-6

# The fix in your own step
assert check_accumulate(accumulate_step) is None  # the step the lesson uses matches fused, run again
assert f"{fix_gap:.1e}" == "3.0e-08" and fix_gap < 1e-6 and fix_scales == [16384, 16384]
assert f"{fix_spacings:.1f}" == "1.0" and oracle_spacings < 10  # the prose: 1.0 spacing at the largest weight
assert oracle_gap < 1e-6 and oracle_scale == 16384, (oracle_gap, oracle_scale)  # the independent oracle

# The answers to the problems, recomputed (the lesson's Problems cell states them)

# Problem 1: the lag
def lag(rho, moves, updates=30_000):  # theta_k = k: how many updates the average trails
    average = 1.0  # after update 1: theta_1
    for k in range(2, updates + 1):
        for move in range(moves):
            average = rho * average + (1 - rho) * (k if move == moves - 1 else k - 1)
    return updates - average


lags = {rho: (lag(rho, 1), lag(rho, 4), lag(rho ** (1 / 4), 4))
        for rho in (0.9, 0.99, 0.999)}

# Problem 2: two counters of apply calls
cosine_10k = keras.optimizers.schedules.CosineDecay(0.1, decay_steps=10_000)
# update t reads the schedule at micro-step 4t - 1 (before _iterations counts its own apply)
ends_at = next(t for t in range(1, 10_001) if float(cosine_10k(4 * t - 1)) < 1e-9)
first_doubling = doubled["Keras's accumulation, N = 4"][0]
for rho, (lag_once, lag_keras, lag_fixed) in lags.items():  # the closed forms the prose states
    assert max(abs(lag_once - rho / (1 - rho)), abs(lag_keras - rho / (1 - rho ** 4)),
               abs(lag_fixed - rho ** 0.25 / (1 - rho))) < 1e-6 and 0 < lag_fixed - lag_once < 0.75
assert [f"{lags[b][1]:.2f}" for b in lags] == ["2.62", "25.12", "250.12"]
assert f"{lags[0.99][1]:.0f}" == "25"  # Keras's average trails by about 25 updates at 0.99, N = 4
assert f"{lags[0.9][2]:.2f}" == "9.74"
assert ends_at == 2501 and first_doubling == 500

print("lesson 08: every number the prose states checks out")
