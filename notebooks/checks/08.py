"""The authors' checks of lesson 08, clipping and loss scaling (not part of the lesson): each re-checks a number or claim the
prose states, over the notebook's names, and fails loudly if a run ever disagrees with the text.

Run by the lesson's last code cell as `%run -i checks/08.py`; it reuses the notebook's names
(`x`, `y`, `make`, `mlp`, `pf`, ...) and recomputes a few small things the lesson no longer shows.
"""
import numpy as np
import keras
import tensorflow as tf

# Section 1: the target, the given clip_each and your clip_once (written from the norm), gradlab and Keras
oracle = mlp()  # the target checked: one tape over the 32 digits, clipped once
with tf.GradientTape() as tape:
    large_loss = loss_fn(y, oracle(x, training=True))
g_tape = [g.numpy() for g in tf.clip_by_global_norm(
    tape.gradient(large_loss, oracle.trainable_variables), 0.5)[0]]
assert pf.relative_error(g_clipped, g_tape) < 1e-6
# the target read off the weights instead (as the strategies' updates are): the same to rounding
assert pf.relative_error(pf.update_of(make("large_batch", clip_norm=0.5), x, y), g_clipped) < 1e-5
helper = pf.per_micro_batch_clipped_grads(mlp(), x, y, 4, 0.5)  # your clip_each is gradlab's helper
assert pf.relative_error(g_each, helper) < 1e-5
assert pf.relative_error(g_each, g_clipped) > 0.1 and pf.relative_error(g_once, g_clipped) < 1e-5
assert min(norm([t.numpy() for t in g]) for _, g in parts) > 0.5
assert f"{pair_cos:.2f}" == "0.08" and abs(each_by_hand - norm(g_each)) < 1e-4
assert f"{cosine:.4f} {norm(g_each):.3f} {norm(g_once):.3f}" == "0.9959 0.278 0.500"
assert f"{pf.relative_error(g_each, g_clipped):.2f}" == "0.45" and 0.99 < cosine < 1.0
assert verdict(g_each, g_clipped) == "miss 45%"  # "the miss of 45%", its printed verdict
# Problem 2 (Adam, moved out of section 1 in r215): "Yes, by 22.7%. Only signs count: the 1.4% of entries whose sign
# clipping each flips move by 2 lr, the rest about the same both ways, so those few carry 98% of the gap" (Answer 2's
# folded cell computes adam_each, adam_once, flips, nonzero and gap2, and prints the three numbers; the lengths of the
# two agree within 1%)
assert verdict(adam_each, adam_once) == "miss 22.7%", verdict(adam_each, adam_once)
assert abs(norm(adam_each) / norm(adam_once) - 1) < 0.01
_flat = lambda g: np.concatenate([np.ravel(t) for t in g])
_flip = np.sign(_flat(g_each)) != np.sign(_flat(g_once))
_adam_d = _flat(adam_each) - _flat(adam_once)
assert (_adam_d[_flip] ** 2).sum() / (_adam_d ** 2).sum() > 0.9 and _flip.sum() < (_flat(g_once) != 0).sum() / 50
# the printed line: the lesson's own count (flips, nonzero, gap2) is this one, and its two numbers as the prose quotes them
assert (flips == _flip).all() and nonzero == (_flat(g_once) != 0).sum() and np.allclose(gap2, _adam_d ** 2)
assert f"{flips.sum() / nonzero:.1%}" == "1.4%" and f"{gap2[flips].sum() / gap2.sum():.0%}" == "98%", (flips.sum(), nonzero)
# Answer 2: "07's 2 sqrt(f) approximates it (0.240 vs 0.227)" (the printed 2 sqrt(f), f unrounded), within two points of the 22.7% miss
assert flip_share == flips.sum() / nonzero and f"{2 * np.sqrt(flip_share):.3f}" == "0.240", flip_share
assert abs(2 * np.sqrt(flip_share) - pf.relative_error(adam_each, adam_once)) < 0.02, flip_share
assert f"{pf.relative_error(adam_each, adam_once):.3f}" == "0.227"  # the printed miss 22.7%, as the fraction quoted
# the mechanism: Adam() (lr 0.001) moves a nonzero entry by about lr on its first step (median 0.998 lr on a run), and a
# flipped entry by about 2 lr (median 0.96 of 2 lr on a run; the smallest gradients less, through epsilon); an entry
# whose sign agrees moves by the same amount both ways (median gap 0)
_lr = float(keras.optimizers.Adam().learning_rate)
assert abs(_lr - 0.001) < 1e-9, _lr  # float32 0.001
assert 0.95 < np.median(np.abs(_flat(adam_once))[_flat(g_once) != 0]) / _lr <= 1.001
assert 0.85 < np.median(np.abs(_adam_d[_flip])) / (2 * _lr) <= 1.001 and np.abs(_adam_d[_flip]).max() <= 2.002 * _lr
assert np.median(np.abs(_adam_d[~_flip])) < 0.05 * _lr
# (not in the prose) the flipped entries are small: their median size is under a fifth of the nonzero entries'
_size = np.abs(_flat(g_once))  # (a run: a tenth)
assert np.median(_size[_flip]) < np.median(_size[_size > 0]) / 5
# "44% too short, 0.278 against 0.500" (section 1 and the Summary): the norm ratio, printed as "44% shorter"
assert f"{short:.0%}" == "44%" and abs(short - (1 - norm(g_each) / norm(g_clipped))) < 1e-12
assert abs(norm(g_clipped) - 0.5) < 1e-6 and f"{1 - float(f'{norm(g_each):.3f}') / 0.5:.0%}" == "44%"
# "the miss, 45%, is nearly all length": it exceeds the length's share by under a hundredth
# c6 goes on: "a smaller learning rate, one that moves with each window's noise and N (Problem 1)": the length is
# Problem 1's (c / N) sqrt(N + N (N - 1) k), set by the micro-batches' cosines and N, not by the learning rate.
# c11: "an inf or nan in any micro-batch makes the sum non-finite": inf + finite = inf, nan + anything = nan, inf - inf = nan
assert not np.isfinite(np.float32(np.inf) + np.float32(1.0)) and not np.isfinite(np.float32(np.nan) + np.float32(1.0))
assert not np.isfinite(np.float32(np.inf) + np.float32(-np.inf))
assert 0 < pf.relative_error(g_each, g_clipped) - short < 0.01
clip_errs = {name: pf.relative_error(u, g_clipped) for name, u in clip_updates.items()}
clip_spacings = {name: spacings(u, g_clipped, at=at_w) for name, u in clip_updates.items()}
assert list(clip_errs) == ["host_average", "accumulate", "fused"]
assert max([*clip_errs.values(), pf.relative_error(g_once, g_clipped)]) < 1e-6
# "Keras's accumulation also clips once, ... right for equal micro-batches" (06's lone weight shows it; not printed here)
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
# clipping once, against the target computed on one tape: "exact" (its printed verdict, README "Two yardsticks")
assert verdict(g_once, g_clipped).startswith("exact: ") and spacings(g_once, g_clipped) <= 10
# the strategies' updates, read off the weights: the gap in spacings at the largest weight (README), under ten
assert all(w_gap(a, v.numpy()) == 0 for a, v in zip(at_w, mlp().trainable_variables))  # mlp(): the same weights
assert all(verdict(u, g_clipped, at=at_w).startswith("exact: ") for u in clip_updates.values())  # "All three are exact"
assert max(clip_spacings.values()) < 10, clip_spacings
# your clip_each and clip_once (or the solution) are the lesson's functions, checked in their cell
assert check_clip(clip_each, False) is None and check_clip(clip_once, True) is None

# Section 3: one check of the sum skips the whole update: micro-batch 2's overflow reaches the window's sum
assert fused_row == [None, None, 1, 1, 2, 2]  # fused skips the whole window, then applies whole windows
# section 3, "Unscale, then clip": clipped once before unscaling, a clip at c / λ (0.500 / 2^15 long), 100% off the clip at c
wrong = [t / lam for t in clip_once(scaled, 0.5)]  # clip once at c before unscaling: a clip at c / λ
assert verdict(wrong, g_clipped) == "miss 100%" and f"{norm(wrong) * 2 ** 15:.3f} {norm(g_clipped):.3f}" == "0.500 0.500"
# section 4: the bad batch, x2, x3: your step exact against the target (the bad batch skipped whole, then x2, x3),
# Keras's accumulation, checking each micro-batch, "lands 51.1% off" (two updates made, λ halved once; sized by the
# baselines pinned at the end)
_target_run = make("large_batch", optimizer=inner_opt)  # the target as two plain large-batch steps: x2, then x3
for _bx, _by in batches[1:3]:
    _target_run.step(_bx, _by)
assert w_gap(weights(_target_run.model), target) == 0  # large_on's concatenated halves are x2 and x3 themselves
assert your_harm.startswith("exact: ") and your_harm == verdict(weights(yours), target, start=w_start)
assert spacings(weights(yours), target) <= 10 and keras_harm == "miss 51.1%", keras_harm
assert int(keras_run.optimizer.iterations) == 2 and float(keras_run.optimizer.dynamic_scale) == 16384
assert your_state["scale"] == 16384 and int(your_opt.iterations) == 2  # yours: the bad window skipped, x2 and x3 applied
assert w_gap(w_start, weights(mlp())) == 0  # every run starts from mlp()'s weights
# what each optimizer holds after the bad batch (pf.held_gradient reads Keras's private accumulators), and the
# weights after it and x2: fused's are the clean batch's, Keras's the mixed batch's (x[:16] with x2[:16])
def sgd_updates(*batches):  # the reference: one SGD(0.1) update of the large batch per batch given
    ref_run = make("large_batch", optimizer=lambda: keras.optimizers.SGD(0.1))
    for bx, by in batches:
        ref_run.step(bx, by)
    return [v.numpy() for v in ref_run.model.weights]


clean = sgd_updates((x2, y2))  # what the next update should apply
mixed = sgd_updates((np.r_[x[:16], x2[:16]], np.r_[y[:16], y2[:16]]))
held_1, w_after, held = {}, {}, {}
for name, optimizer in [("fused", lso), ("keras", keras_lso)]:
    run = make(name, 2, optimizer=optimizer)  # "keras": one apply per micro-batch
    run.step(bad, y)
    held_1[name] = pf.held_gradient(run.optimizer)
    assert float(run.optimizer.dynamic_scale) == 16384 and int(run.optimizer.iterations) == 0, name
    run.step(x2, y2)
    w_after[name], held[name] = [v.numpy() for v in run.model.weights], pf.held_gradient(run.optimizer)
assert held_1["fused"] == 0.0 < held_1["keras"] and held["fused"] == 0.0 < held["keras"]
assert max(w_gap(w_after["fused"], clean), w_gap(w_after["keras"], mixed)) < 1e-6
assert w_gap(w_after["keras"], clean) > 1e-3
micro_loss = [float(loss_fn(y[h], mlp()(bad[h]))) for h in (slice(0, 16), slice(16, 32))]
_bad_scaled = micro_grads(mlp(), bad, y, 2, scale=2.0 ** 15)  # (not the lesson's `scaled`)
not_finite = sum(int(np.sum(~np.isfinite(g))) for g in weighted_sum(_bad_scaled))
entries = sum(int(np.size(g)) for g in _bad_scaled[0][1])
shifted = sgd_updates((np.r_[x[:16], x2[:16]], np.r_[y[:16], y2[:16]]),  # every window a micro-batch late
                      (np.r_[x2[16:], x3[:16]], np.r_[y2[16:], y3[:16]]))
shift_gap = w_gap([v.numpy() for v in replay.weights], shifted)
assert abs(not_finite - 19_000) < 500 and entries == 50_890
assert f"{micro_loss[0]:.3f}" == "2.206" and micro_loss[1] == np.inf  # micro-batch 2: inf
assert int(replay_lso.iterations) == 2  # six applies, one skipped: two updates and one micro-batch held
assert row == [1, None, 1, 2, 2, "held"]  # "applies the held x[:16] together with x2[:16] in update 1"
# each later window a micro-batch late, "to rounding": under ten spacings (01's yardstick)
assert shift_gap < 1e-6 and spacings([v.numpy() for v in replay.weights], shifted) < 10
# section 2's statement of dynamic loss scaling: λ starts at 2^15 and doubles after 2,000 finite calls
assert float(replay_lso.initial_scale) == 2.0 ** 15 and replay_lso.dynamic_growth_steps == 2000
# "Skips are part of the design. The start at 2^15 is large on purpose ... Each doubling, 2,000 clean updates on": Keras's own defaults
_lso_defaults = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD())
assert _lso_defaults.initial_scale == 2.0 ** 15 and _lso_defaults.dynamic_growth_steps == 2000
assert w_gap([v.numpy() for v in replay.weights], sgd_updates((x2, y2), (x3, y3))) > 1e-3  # not x2, then x3

# "under mixed_float16, compile wraps your optimizer in a LossScaleOptimizer itself ... mixed_bfloat16 gets no wrapper"
for policy, wrapped in (("mixed_float16", True), ("mixed_bfloat16", False)):
    keras.mixed_precision.set_global_policy(policy)
    try:
        policy_model = mlp()
    finally:
        keras.mixed_precision.set_global_policy("float32")
    policy_model.compile(keras.optimizers.SGD(0.1, gradient_accumulation_steps=4), loss_fn, jit_compile=False)
    assert isinstance(policy_model.optimizer, keras.optimizers.LossScaleOptimizer) == wrapped, policy
    inner = policy_model.optimizer.inner_optimizer if wrapped else policy_model.optimizer
    assert inner.gradient_accumulation_steps == 4, policy  # the wrapped optimizer keeps accumulating per call

# Section 4, "checks each micro-batch alone, halving λ for each bad one"; the pace: "Keras halves lambda per
# overflowing micro-batch: if all four overflow, from 2^15 to 2048, where fused halves it once, to 16384" (and the Summary: "it halves λ once per bad micro-batch (2048 against 16384 when all
# four overflow)")
two_bad = x.copy()
two_bad[:8] *= 1e38
two_bad[24:] *= 1e38  # micro-batches 1 and 4 of 4 overflow
halved = {}  # λ after one step of 4 micro-batches of 8, from 2^15
for case, bad_x in (("1 and 4", two_bad), ("all 4", x * 1e38)):
    for name, accum in (("fused", None), ("keras", 4)):
        run = make(name, 4, optimizer=lambda: keras.optimizers.LossScaleOptimizer(
            keras.optimizers.SGD(0.1, gradient_accumulation_steps=accum)))
        run.step(bad_x, y)  # a float32 model: no float16 warning from gradlab
        halved[case, name] = float(run.optimizer.dynamic_scale)
assert halved == {("1 and 4", "fused"): 16384, ("1 and 4", "keras"): 8192,
                  ("all 4", "fused"): 16384, ("all 4", "keras"): 2048}
# c28: "λ regrows N times as fast. Keras counts apply calls toward dynamic_growth_steps (2,000), so it tries a doubling
# every 500 updates": Keras's default, and a small run of its accumulation (N = 4, dynamic_growth_steps=8) that
# doubles λ after 2 updates, 8 finite apply calls
assert keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1)).dynamic_growth_steps == 2000 and 2000 // 4 == 500
_pace = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1, gradient_accumulation_steps=4), dynamic_growth_steps=8)
_pw = keras.Variable(0.0)
_pace.build([_pw])
_pace_scales = []
for _ in range(8):
    _pace.apply_gradients([(tf.constant(1.0), _pw)])
    _pace_scales.append(float(_pace.dynamic_scale))
assert _pace_scales == [2.0 ** 15] * 7 + [2.0 ** 16] and int(_pace.iterations) == 2, (_pace_scales, int(_pace.iterations))
# section 4 (c24) and its folded cell's print: "8 calls with dynamic_growth_steps=2 make 2 updates and double λ 4 times,
# to 2^19; fused doubles it once"; "a doubling every 2,000 calls, 500 updates at N = 4"
assert pace == {"Keras (a call per micro-batch)": (2, 19), "fused (a call per update)": (2, 16)}, pace

# Section 2's float16 range: "Float16's largest finite value is 65504"
assert float(np.finfo(np.float16).max) == 65504

# Section 2: your decide (or the solution) beside Keras's LossScaleOptimizer, one call per window, growth=3: "Yours and
# Keras's agree on all twelve windows, both skipping windows 2, 7 and 8" (its folded cell prints one line)
assert check_decide(decide) is None and mine == theirs and len(mine) == 12 and differ == 0
assert skipped == [[2, 7, 8], [2, 7, 8]], skipped
assert [k + 1 for k, (applied, _) in enumerate(mine) if not applied] == [2, 7, 8]  # "windows 2, 7 and 8 ... skipped"
assert [lam / 2 ** 15 for _, lam in mine] == [1, .5, .5, .5, 1, 1, .5, .25, .25, .25, .5, .5]  # three finite: doubled
# your decide, called once per update on the same 2,001 updates, follows the plain LSO's λ exactly
_state = {"scale": 2.0 ** 15, "clean": 0}
_yours = [2.0 ** 15] + [(decide([tf.constant(v)], _state), _state["scale"])[1] for v in [np.inf] + [1.0] * 2000]
assert _yours[1] == 16384 and max(_yours[2:-1]) == 16384 and _yours[-1] == 32768 and len(_yours) == 2002

# Section 3: the fix in your own step ("exact" against fused and Keras's train_on_batch, printed; λ halved once)
assert check_accumulate(accumulate_step) is None  # the step the lesson uses matches fused, run again
fix_gap, oracle_gap = w_gap(fix_w, fused_w), w_gap(oracle_mine, oracle_w)
fix_spacings, oracle_spacings = spacings(fix_w, fused_w), spacings(oracle_mine, oracle_w)
assert fix_gap < 1e-6 and fix_scales == [16384, 16384] and max(fix_spacings, oracle_spacings) <= 2.0
assert verdict(fix_w, fused_w).startswith("exact: ") and verdict(oracle_mine, oracle_w).startswith("exact: ")
assert oracle_gap < 1e-6 and oracle_scale == 16384, (oracle_gap, oracle_scale)  # the independent oracle

# The answers to the problems, recomputed (the lesson's Problems cell states them)
# Problem 1: N clipped micro-batches of pairwise cosine k average to (c / N) sqrt(N + N (N - 1) k);
# section 1's four (a mean cosine of 0.08) give 0.278 at c = 0.5; orthogonal, c / sqrt(N): a quarter of c at N = 16
clip_len = lambda c, N, k: c / N * np.sqrt(N + N * (N - 1) * k)
assert abs(clip_len(0.5, 4, pair_cos) - norm(g_each)) < 1e-4 and f"{clip_len(0.5, 4, pair_cos):.3f}" == "0.278"
assert clip_len(1.0, 16, 0.0) == 0.25
# at cosine 0.08: under c/2 "from N = 6, 0.483 c" (N > 0.92/0.17 = 5.4); "toward c sqrt(0.08) = 0.283 c"; printed by the
# notebook's "Answer 1, run" cell (N = 5, 6, 10,000)
assert clip_len(1.0, 5, 0.08) > 0.5 > clip_len(1.0, 6, 0.08) and f"{0.92 / 0.17:.1f}" == "5.4"
assert f"{clip_len(1.0, 6, 0.08):.3f} {np.sqrt(0.08):.3f}" == "0.483 0.283" and abs(pair_cos - 0.08) < 0.005
assert f"{clip_len(1.0, 10_000, 0.08):.3f}" == "0.283"  # N = 10,000: near c sqrt(0.08)
# section 1 (r4): "a smaller learning rate whose factor depends on the micro-batches' cosine and on N (Problem 1's
# formula: at cosine 0.08, 0.514 at N = 5, toward 0.283 as N grows)": the Answer 1 cell's printed digits
assert f"{clip_len(1.0, 5, 0.08):.3f}" == "0.514" and clip_len(1.0, 5, 0.08) > clip_len(1.0, 10_000, 0.08)
# Going further, the loss scale's pace (N = 4): "one micro-batch overflows (λ halves to 16384 either way) ... Keras counts
# 4 apply calls an update, so λ doubles after updates 500, 1,000, 1,500 and 2,000, to 262144, against one doubling, to
# 32768, for one check per update. dynamic_growth_steps=8000 restores the pace"; section 4: "grows back N times as fast:
# at N = 4 it probes a doubling, and risks a skip, every 500 updates"
assert halved["1 and 4", "keras"] == 2.0 ** 15 / 4 and row[:2] == [1, None]

# Problem 3's answer (retuning moved out of section 1, h08c): the shrink is clip each's length over c on section 1's
# batch, printed once in Answer 3's cell: "0.555 at N = 4, 0.284 at N = 16", thresholds "0.90" and "1.76"
assert f"{shrink[4]:.3f} {shrink[16]:.3f}" == "0.555 0.284", shrink
assert f"{c4:.2f} {c16:.2f}" == "0.90 1.76" and c4 == 0.5 / shrink[4] and c16 == 0.5 / shrink[16], shrink
assert abs(shrink[4] - norm(g_each) / 0.5) < 1e-4 and shrink[16] < shrink[4] < 1  # N = 4: section 1's 0.278 / 0.5
assert list(retuned) == [1, 2, 3] and abs(retuned[1][0] - run_loss[1]) < 1e-4, retuned
assert all(len(r) == 5 for r in retuned.values()), retuned  # once at c; at c4: each N = 4, once, each N = 16; each N = 16 at c16
# "at N = 4, clipping each at 0.90 ends below clipping once at 0.5 on every seed; clipping once at 0.90 lower still"
assert all(o4 < e4 < l1 for l1, e4, o4, _, _ in retuned.values()), retuned
# "N = 4's threshold at N = 16 is too small again: above clipping once at 0.5 on every seed; N = 16's own, 1.76, fixes it"
assert all(x16 > l1 and e16 < l1 for l1, _, _, x16, e16 in retuned.values()), retuned
assert all(e < run_loss[4] - 0.1 for _, e4, _, _, e16 in retuned.values() for e in (e4, e16))  # far from 0.833, 1.289
# c8: "So does Keras's accumulation, each clip option: it averages, then clips (Keras 3.15.1's source)": the printed
# verdicts (c7), and the source's order: (g + acc_g) / steps, then self._clip_gradients(grads), on the update step
import inspect as _inspect
assert list(keras_clips) == ["global_clipnorm", "clipnorm", "clipvalue"], keras_clips
assert all(verdict(*u, at=at_w).startswith("exact: ") for u in keras_clips.values()), keras_clips
assert all(pf.relative_error(u[1], unclipped) > 0.1 for u in keras_clips.values())  # each clip bites the large batch
_src = _inspect.getsource(keras.optimizers.Optimizer._backend_apply_gradients)
assert 0 < _src.index("/ steps") < _src.index("self._clip_gradients(grads)"), _src  # any Keras the course allows
# Section 2: "An inf or nan in any micro-batch makes the float32 sum non-finite, and finite float16 gradients cannot
# overflow it": a sum of even a million float16 maxima stays far inside float32's range
assert 1e6 * 65504 < float(np.finfo(np.float32).max) / 1e25
# Section 2, your float16 pass (float16_grad, or the solution): the table it prints is gradlab's pass, share for share
assert check_float16_grad(float16_grad) is None
assert fp16["trained"] == pf.float16_backward_zeros(trained, loss_fn, x, y, scales.values()), fp16
# the numbers the prose states beside the outputs: section 1's lengths and gaps, sections 3 and 4's "1.0 spacing off"
_SOL = clip_once is solution_clip_once and decide is solution_decide and accumulate_step is solution_accumulate_step
assert f"{large_norm:.3f}" == "1.651"  # "The large batch's gradient is 1.651 long"
_norms = [norm([t.numpy() for t in g]) for _, g in parts]
assert f"{min(_norms):.1f} {max(_norms):.1f}" == "2.6 3.4", _norms  # "2.6 to 3.4 long, all past the threshold"
assert not _SOL or verdict(g_once, g_clipped) == "exact: 2.1 spacings"  # "Clipping the sum once is exact, 2.1 spacings off"
assert [verdict(u, g_clipped, at=at_w) for u in clip_updates.values()] == ["exact: 0.5 spacings"] * 3  # "0.5 spacings off"
assert not _SOL or (verdict(fix_w, fused_w), verdict(oracle_mine, oracle_w)) == ("exact: 1.0 spacings",) * 2
assert not _SOL or your_harm == "exact: 1.0 spacings"  # section 4: "Your step is exact, 1.0 spacing off"
# Section 1's sweep: "clipping each bites wherever c is below the micro-batch norms, which noise makes longer than the
# window's. It misses 45.0% for c <= 1, 33.5% at 2, 6.7% at 3, and nothing at 4, above all": the printed line's digits
_norms = [norm([t.numpy() for t in g]) for _, g in parts]
assert max(_norms) < 4.0 and min(_norms) > 2 > large_norm and 1.0 < large_norm, (_norms, large_norm)
assert [f"{m:.1%}" for m in sweep.values()] == ["45.0%", "45.0%", "45.0%", "33.5%", "6.7%", "0.0%"], sweep
# r15: "Below the window's 1.651 every micro-batch and the sum are clipped, so both updates are linear in c and the miss
# stays put": the three misses at c <= 1 agree to rounding, and every norm exceeds 1
assert max(sweep[c] for c in (0.25, 0.5, 1.0)) - min(sweep[c] for c in (0.25, 0.5, 1.0)) < 1e-5, sweep
assert sweep[4.0] < 1e-6 and all(a >= b for a, b in zip(list(sweep.values()), list(sweep.values())[1:])), sweep
# Section 4: "Keras's update 1 applies x[:16] and x2[:16]: it skipped the overflowing x[16:] alone ...; x3[16:] still
# waits" (the timeline's printed line, c24); "Keras lands 51.1% off the target, yet equals clipped large batches on the
# pairs it formed (0.5 spacings, last line): no gradient is wrong ... Large batches on Keras's 64 digits in the target's
# pairing miss by 49%: the 51.1% is mostly which digits the updates saw"; the fold "The other baselines": "Reordering
# or re-pairing the target's digits moves it 15.3% and 17.3%; two other clean batches, 92.3%". "Every later window
# straddles two batches, so weights set per batch (07's count_first) would weigh the wrong micro-batches": a claim
# from the timeline (update 2 holds x2[16:] and x3[:16]), not run, hence "would"
assert row == [1, None, 1, 2, 2, "held"], row
assert keras_vs_pairs == "exact: 0.5 spacings", keras_vs_pairs
# c25: "Its two updates miss the target's by 51.1% (two batches of other digits: 92.3%)": the yardstick line, printed
assert other_harm == "miss 92.3%", other_harm
# r5, section 2: "So that small gradients neither round to zero (below about 3e-08, half of 6.0e-08, the smallest
# positive value) nor lose digits (below 6.1e-05)": float16 rounds to nearest, so a value under half the smallest
# subnormal rounds to 0 and one just above it rounds up to the smallest subnormal.
# c16: "The table's real float16 backward pass loses 5.62% of the entries at λ = 1 and 0.03% at 2^15 ... at 2^20, 0.17%
# of the fresh gradient's entries" (earlier: "The fresh mlp's gradient fits float16 at λ = 1 ... at λ = 1, 5.62% of
# the nonzero entries come back 0 ...; at 2^15, 0.03%. ... at 2^20, 0.17% of the fresh gradient's entries are inf or
# nan" (pf.float16_backward_zeros, tested against a hand-written float16 tape; the seeded runs' printed digits)
tiny, normal = float(np.finfo(np.float16).smallest_subnormal), float(np.finfo(np.float16).smallest_normal)
assert f"{tiny:.1e} {normal:.1e}" == "6.0e-08 6.1e-05" and tiny == 2.0 ** -24 and normal == 2.0 ** -14
assert f"{tiny / 2:.0e}" == "3e-08" and np.float16(0.49 * tiny) == 0 and np.float16(0.51 * tiny) == np.float16(tiny)
_f, _t = fp16["fresh"], fp16["trained"]
assert _f[1.0] == _f[2.0 ** 15] == (0.0, 0.0) and _f[2.0 ** 20][0] == 0.0 and f"{_f[2.0 ** 20][1]:.2%}" == "0.17%", _f
assert f"{_t[1.0][0]:.2%}" == "5.62%" and f"{_t[2.0 ** 15][0]:.2%}" == "0.03%" and f"{_t[2.0 ** 20][0]:.2%}" == "0.00%", _t
assert all(inf == 0.0 for _, inf in _t.values()), _t  # the small trained gradient overflows at none of the three
assert _t[1.0][0] > 100 * _t[2.0 ** 15][0] > 0  # λ lifts nearly all of what λ = 1 loses
# "After 20 epochs its predictions are confident and its gradient small": its loss on these 32 digits, and the
# float32 gradient's norm, against the fresh mlp's
def _loss_and_norm(_model):
    with tf.GradientTape() as _tape:
        _loss = loss_fn(y, _model(x, training=True))
    return float(_loss), norm([g.numpy() for g in _tape.gradient(_loss, _model.trainable_variables)])
(_l_fresh, _n_fresh), (_l_trained, _n_trained) = _loss_and_norm(mlp()), _loss_and_norm(trained)
assert _l_trained < 0.02 < 1 < _l_fresh and _n_trained < 0.1 * _n_fresh, (_l_fresh, _l_trained, _n_fresh, _n_trained)
# Section 1's training run (c10, c11): "After 40 updates at the same rate and c, the loss is 0.587 at N = 1 (the large
# batch, clipped once), 0.833 at N = 4 and 1.289 at N = 16; fused, clipping once at N = 16, reaches 0.587 too"
assert [f"{run_loss[N]:.3f}" for N in (1, 4, 16)] == ["0.587", "0.833", "1.289"], run_loss
assert f"{once_16:.3f}" == "0.587" and abs(once_16 - run_loss[1]) < 1e-4, (once_16, run_loss)
assert run_loss[1] < run_loss[4] < run_loss[16]  # "slower, more so at larger N"
assert f"{float(loss_fn(y_run, mlp()(x_run))):.1f}" == "2.4"  # all start from the same untrained mlp (loss 2.4)
# c8: "the factor falls as N grows: at cosine 0.08 the update is 0.557 c long at N = 4" (printed in c7, N = 4 only since
# r18: other N are Problem 1's answer, pinned above); section 1's measured four: 0.278 / 0.5
assert f"{clip_len(1.0, 4, 0.08):.3f}" == "0.557" and abs(norm(g_each) / 0.5 - clip_len(1.0, 4, 0.08)) < 0.005
# c28, the slip's cost (c27, printed): "Checked once per update, 50 updates apply; the test loss falls from 2.364 to
# 0.712. Keras skips only the 10 bad micro-batches and ends lower: 57 updates, loss 0.634"; the Summary: "0.634 against
# 0.712"; "one in six" batches with an overflowing micro-batch: 10 of 60
assert f"{start_loss:.3f}" == "2.364" and len(range(0, 60, 6)) == 10
assert [(u, f"{l:.3f}") for u, l in cost.values()][:2] == [(50, "0.712"), (57, "0.634")], cost
# the third run: "skips the same 10 but keeps its windows, averaging each bad window's other three: 60 updates"
assert cost["no slip, bad micro-batch dropped"][0] == 60, cost
# c29: "Skipping those 10 without slipping ...: 60 updates, 0.638. Skipping less data, not the slip, beat 0.712; on this
# one seed the slip cost nothing visible"; the Summary: "(0.634; 0.638 with the same skips, unslipped)"
_no_slip, _keras_loss, _once_loss = (cost[k][1] for k in ("no slip, bad micro-batch dropped",
                                                          "Keras, a check per micro-batch", "one check per update"))
assert f"{_no_slip:.3f}" == "0.638" and abs(_no_slip - _keras_loss) < 0.01 < _once_loss - _no_slip, cost
assert 57 == (60 * 4 - 10) // 4 and cost["Keras, a check per micro-batch"][1] < cost["one check per update"][1]
assert all(np.isfinite(v.numpy()).all() for r in cost_runs.values() for v in r.model.trainable_variables)
# c27: "7,495 of 9,995 updates straddled, 75%"; "it skipped 4, about every 2,000 updates, so shifts 1, 2 and 3 made
# 6,000 straddle" (8,000 apply calls per doubling at N = 4: 2,000 updates)
assert f"{7495 / 9995:.0%}" == "75%" and 8000 // 4 == 2000 and 3 * 2000 == 6000
# c21: "divided by λ = 2^15, to 1.5e-05 long" (printed there)
assert f"{norm(wrong):.1e}" == "1.5e-05" and f"{norm(wrong) * 2 ** 15:.3f}" == "0.500"

# c16, the histogram (pitfall_plots.plot_float16_range, tested against numpy.histogram): "At λ = 1, 8.40% of its
# nonzero entries lie below 2^-24 ... and 43.03% between it and 2^-14 ... At λ = 2^15 it moves 15 powers of two right:
# 0.04% below, the largest entry 2^8.5, far under 65504" (the trained mlp's float32 gradient on section 1's digits)
_below = lambda lam: f"{np.mean(lam * g32 < 2 ** -24):.2%}"
_between = f"{np.mean((g32 >= 2 ** -24) & (g32 < 2 ** -14)):.2%}"
assert (_below(1.0), _between, _below(2.0 ** 15)) == ("8.40%", "43.03%", "0.04%"), (_below(1.0), _between)
assert f"{np.log2(g32.max() * 2 ** 15):.1f}" == "8.5" and g32.max() * 2 ** 15 < 65504 / 100 and np.all(g32 > 0)
# r15: "Float16 rounds to nearest, so entries between 2^-25 and 2^-24 round up to the smallest subnormal: casting this
# gradient would zero 6.04%. The real float16 backward pass loses 5.62%" (no cause stated);
# "At λ = 2^15 ... 0.03% below 2^-25 (the real pass: 0.03%)" (c15 prints the shares below 2^-25)
_under = lambda lam: np.mean(lam * g32 < 2 ** -25)
assert f"{_under(1.0):.2%}" == "6.04%" and f"{_under(2.0 ** 15):.2%}" == "0.03%", (_under(1.0), _under(2.0 ** 15))
assert _under(1.0) == np.mean(g32.astype(np.float16) == 0)  # the cast zeroes exactly those below 2^-25
assert _under(1.0) != _t[1.0][0] and abs(_under(1.0) - _t[1.0][0]) < 0.01  # the real pass: close, not equal
# c27, the worst case (pf.loss_scale_run, tested against the rule written out): "Checked once per update: 16
# micro-batches skipped and none straddled two batches. Keras's check: 19 micro-batches skipped, 7,495 of 9,995
# updates straddling; with dynamic_growth_steps=8000, 4 and 6,000"; the Summary: "skipped 19 micro-batches against 16,
# yet 7,495 of its updates straddled two batches"
_once, _keras, _slow = long_runs.values()
assert (_once["skipped"], _once["updates"], _once["straddling"]) == (16, 9996, 0), _once
assert (_keras["skipped"], _keras["updates"], _keras["straddling"]) == (19, 9995, 7495), _keras
assert (_slow["skipped"], _slow["straddling"]) == (4, 6000), _slow
assert 10_000 * 4 - _keras["skipped"] >= 4 * _keras["updates"]  # every applied update holds four micro-batches
# Section 3, both clip orders with a loss scale: "Clipping the scaled gradient at c is clipping the true one at c/λ, bit
# for bit: 1.53e-05 long (clip once). Clip after unscaling, or at λc: 0.500 (clip each: its short 0.278)" (c20 prints
# both orders; recomputed here, as its loop keeps only the last)
assert lam == 2.0 ** 15 and len(scaled) == len(parts) == 4
for _clip, _long in ((clip_each, "0.278"), (clip_once, "0.500")):
    _at_c, _at_lam_c = ([t / lam for t in _clip(scaled, c)] for c in (0.5, 0.5 * lam))
    assert w_gap(_at_c, _clip(parts, 0.5 / lam)) == 0 and w_gap(_at_lam_c, _clip(parts, 0.5)) == 0, _clip
    assert f"{norm(_at_lam_c):.3f}" == _long and w_gap(_at_lam_c, _clip(parts, 0.5)) == 0
assert f"{norm(wrong):.2e}" == "1.53e-05" and w_gap(wrong, clip_once(parts, 0.5 / lam)) == 0
# Section 3, what a Keras user writes: "LossScaleOptimizer refuses global_clipnorm; it goes on the inner optimizer"
try:
    keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1), global_clipnorm=0.5)
    _refused = False
except ValueError as _e:
    _refused = "inner_optimizer" in str(_e)
assert _refused
# c23: "Both clip once, after unscaling (the inner global_clipnorm sees the unscaled mean): 0.5 spacings from the clipped
# large batch, which clipping each misses by 45%. mixed_float16 moved the weights 0.296% from float32's in 20 updates;
# test loss 1.9481 both ways, λ at 2^15 throughout" (c22 prints both ways' lines)
assert list(runs) == ["keras_way", "gradlab_way"]
for _way, (_update, (_w32, _m32, _o32, *_), (_w16, _m16, _o16, *_)) in runs.items():
    assert verdict(_update, g_clipped, at=at_w) == "exact: 0.5 spacings" and verdict(g_each, _update) == "miss 45%", _way
    assert _m16.dtype_policy.name == "mixed_float16" and _m32.dtype_policy.name == "float32", _way
    assert all(v.dtype == "float32" for v in _m16.trainable_variables)  # float16 compute, float32 weights
    assert isinstance(_o16, keras.optimizers.LossScaleOptimizer) and _o16.inner_optimizer.global_clipnorm == 0.5
    assert verdict(_w16, _w32, start=at_w) == "miss 0.296%", (_way, verdict(_w16, _w32, start=at_w))
    assert f"{test_loss(_m16):.4f} {test_loss(_m32):.4f}" == "1.9481 1.9481", _way
    assert abs(test_loss(_m16) - test_loss(_m32)) < 1e-4, _way  # the printed gap
    assert float(_o16.dynamic_scale) == 2.0 ** 15 and int(_o16.iterations) == 20, _way  # no update skipped
    assert 1.9 < test_loss(_m32) < start_loss  # 20 updates moved it down from 2.364, a little
# c22 (j08): float16, N = 4: at 2^18 your step applies, λ on each mean (λ/8 a digit) skips; at 2^19 the large batch
# skips and your step does not; the warning printed is gradlab's LOSS_SCALE_WARNING
assert list(f16.values()) == [(True, 2.0 ** 18), (False, 2.0 ** 17), (True, 2.0 ** 19), (False, 2.0 ** 18)], f16
from gradlab.core.normaliser import LOSS_SCALE_WARNING
assert notes == {LOSS_SCALE_WARNING}, notes
print("lesson 08: every number the prose states checks out")
# c29 (h08c), lambda-caused overflows in a mixed_float16 run, 3 seeds (the folded cost cell's second table): "Keras's check
# trains better on every seed": lower test loss and more updates applied; overflows every few updates when checked once
assert list(lam_cost) == [(s, p) for s in (1, 2, 3) for p in ("once", "keras")], lam_cost
assert all(lam_cost[s, "keras"][2] < lam_cost[s, "once"][2] - 0.05 for s in (1, 2, 3)), lam_cost
assert all(lam_cost[s, "once"][0] < lam_cost[s, "keras"][0] < 60 and lam_cost[s, "once"][0] <= 50 for s in (1, 2, 3)), lam_cost
# c29's quoted ranges: "checked once, 0.754 to 0.759 (44 or 45 updates); Keras, 0.618 to 0.661 (54 or 55)", "its peak
# λ, 2^18 against 2^20, is the same scale per digit" (Keras scales a micro-batch's mean loss, λ/8 per digit, fused the
# window's term, λ/32: 2^18/8 = 2^20/32); the runs are deterministic on a CPU (fixed seeds and batches), the bands
# for safety
_lam = {p: [lam_cost[s, p] for s in (1, 2, 3)] for p in ("once", "keras")}
assert f"{min(r[2] for r in _lam['once']):.3f} {max(r[2] for r in _lam['once']):.3f}" == "0.754 0.759", _lam
assert f"{min(r[2] for r in _lam['keras']):.3f} {max(r[2] for r in _lam['keras']):.3f}" == "0.618 0.661", _lam
assert {r[0] for r in _lam["once"]} <= {44, 45} and {r[0] for r in _lam["keras"]} <= {54, 55}, _lam
assert max(r[1] for r in _lam["keras"]) == 18 and max(r[1] for r in _lam["once"]) == 20, _lam
assert all(0.5 < r[2] < 0.9 for rs in _lam.values() for r in rs), _lam
# Answer 3: "at N = 16, at 0.853 to 0.881, until c is N = 16's 1.76"; "c = 0.5/0.555 = 0.90"
_x16 = [r[3] for r in retuned.values()]
assert f"{min(_x16):.3f} {max(_x16):.3f}" == "0.853 0.881" and min(_x16) > max(r[0] for r in retuned.values()), _x16

# h08x: section 1's loss curves (c9 draws them): "Clipping once (fused, dashed) follows the large batch: 0.587 at both N";
# the final losses are the printed ones (run_loss, once_16 are the curves' last points)
assert all(len(c) == 40 for c in curves.values()) and once_16 == curves[16, "once"][-1], {k: len(c) for k, c in curves.items()}
assert all(run_loss[N] == curves[N, "each"][-1] for N in (1, 4, 16)), run_loss
assert f"{curves[4, 'once'][-1]:.3f}" == "0.587" and abs(curves[4, "once"][-1] - run_loss[1]) < 1e-4
assert max(abs(a - b) for N in (4, 16) for a, b in zip(curves[N, "once"], curves[1, "each"])) < 1e-3  # "lie on"
assert all(a > b for a, b in zip(curves[16, "each"][4:], curves[4, "each"][4:]))  # N = 16 above N = 4 (from update 5)
# section 1's c-sweep figure: the micro-batch norms drawn are the printed ones, all above the window's 1.651
assert [f"{n:.3f}" for n in micro_norms] == ["2.835", "2.959", "2.629", "3.440"] and min(micro_norms) > large_norm
# the recipe (c30): scale, sum, check once, unscale, clip, apply, with a plain SGD(0.1), beside fused on section 3's
# four batches: exact (within ten spacings), λ halved once by the bad batch
assert spacings(recipe_w, fused_w2) <= 10 and verdict(recipe_w, fused_w2).startswith("exact: ") and recipe_scale == 16384
# Going further: "with dynamic_growth_steps=8000 it skips 4, one per 2,000 updates, so shifts 1 to 3 cover 60%"
assert f"{_slow['straddling'] / _slow['updates']:.0%}" == "60%" and _slow["straddling"] == 3 * 2000, _slow
# section 3, c18: "the fresh mlp loses none" (at λ = 1); "at 2^20, 0.17% of the fresh mlp's entries [overflow]"
assert fp16["fresh"][1.0] == (0.0, 0.0) and f"{fp16['fresh'][2.0 ** 20][1]:.2%}" == "0.17%" and fp16["trained"][2.0 ** 20][1] == 0.0
# section 3's Keras run: "λ ends at 2^15" on both ways' mixed_float16 runs
assert all(float(r[2][2].dynamic_scale) == 2.0 ** 15 for r in runs.values()), [float(r[2][2].dynamic_scale) for r in runs.values()]
