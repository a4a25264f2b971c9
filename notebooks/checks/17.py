"""The authors' checks of lesson 17 (17-the-lab.ipynb), not part of the lesson.

Run by the lesson's last cell with `%run -i`, over the notebook's names: it re-checks every number the
prose states against the run the notebook just made, and fails loudly where a run disagrees with the
text."""
import numpy as np

assert len(mnist.x_train) == 4000 and len(mnist.x_test) == 1000  # one test digit is 0.1 points

# Step 1: the loop by hand; fused within float32 rounding of the large batch (gradlab's verdict: exact), no accuracy change
assert loss_fused.shape == loss_large.shape == (3, 150)
most = spacings(loss_fused, loss_large)  # over every loss of every seed
assert most <= 10 and acc_by_seed == [0.0] * 3, (most, acc_by_seed)
assert verdict(loss_fused, loss_large) == "exact: 3.0 spacings", verdict(loss_fused, loss_large)
# c6's details: "Past ten, *Y eps* is the relative gap in units of $2^{-23}$ (float32's step at 1)": yardstick's EPS,
# float32's spacing at 1
assert 2.0 ** -23 == float(np.spacing(np.float32(1))) and f"{2.0 ** -23:.1e}" == "1.2e-07"
import gradlab.studies.yardstick as _yardstick
assert _yardstick.EPS == 2.0 ** -23
# c5/c6: "never differ by more than 7.2e-07 (exact: 3.0 spacings)"; a spacing is float32's step at the largest |entry|
# of the reference (yardstick.spacings' default): "the large batch's largest loss, 2.46, whose step is 2.4e-07"
assert top == np.max(np.abs(loss_large)) and f"{top:.2f}" == "2.46" and f"{gap:.1e}" == "7.2e-07", (top, gap)
assert f"{float(np.spacing(np.float32(top))):.1e}" == "2.4e-07" and f"{gap / np.spacing(np.float32(top)):.1f}" == "3.0"
# "paired": a seed's runs draw the same rows, whatever the way
assert all(np.array_equal(sample_order(a.config), sample_order(b.config))
           for g in measured["exact"][1:] for a, b in zip(g.results, large.results))
# c5: the first update's rows, printed: the same in both runs over all 150 updates
assert first["fused"].shape == first["large_batch"].shape == (150, 100) and np.sum(first["fused"] != first["large_batch"]) == 0
# Measure's runs are the hand loop's (the learner's once it passes, else the solution), bit for bit ("0 spacings, bit for bit"),
# and accuracy for accuracy
assert seeds_by_hand in (my_seeds_by_hand, solution_seeds_by_hand)
assert yours_vs_lab == 0.0 and acc_vs_lab == 0.0, (yours_vs_lab, acc_vs_lab)
assert [r.config.seed for g in measured["exact"] for r in g.results] == [0, 1, 2] * 3
assert [g.results[0].config.strategy for g in measured["exact"]] == ["large_batch", "fused", "keras"]
# both accumulating ways exact at every update (Measure's lines: gradlab's 3.0, Keras's 2.0 spacings), no accuracy change
keras_losses = [r.losses for r in keras_exact.results], [r.losses for r in large.results]  # 3 seeds x 150
assert verdict([r.losses for r in accumulated.results], keras_losses[1]) == verdict(loss_fused, loss_large)
assert np.all(paired_gaps(keras_exact, large) == 0) and np.all(paired_gaps(accumulated, large) == 0)
# Keras's way, every loss: gradlab's verdict, exact (inside the README's ten); seeds alone: the large batch 92.8 to 94.3 %
assert verdict(*keras_losses) == "exact: 2.0 spacings", verdict(*keras_losses)
assert spacings(*keras_losses) <= 10, spacings(*keras_losses)
assert [f"{100 * a:.1f}" for a in (acc_large.min(), acc_large.max())] == ["92.8", "94.3"], acc_large
# the paired interval (Step 2): the learner's or the solution's, checked against gradlab's; on exact it reads +0.0 ± 0.0
assert paired in (my_paired, solution_paired)
assert np.all(paired(keras_exact, large)[0] == 0) and paired(keras_exact, large)[1:] == (0.0, 0.0)
assert f"{t_quantile(0.975, 2):.3f}" == "4.303"  # "t_2 = 4.303 for three seeds"
_d = np.array([1.0, 2.0, 3.0])  # gaps 1, 2, 3: mean 2, s_d 1
assert np.allclose(seed_gaps.interval(_d), (2.0, 4.303 / np.sqrt(3)), rtol=1e-4)  # the table's value


def change(group):  # final accuracy against the large batch, seed by seed, in points
    return np.array([100 * (r.accuracy - group.reference[r.config.seed].accuracy) for r in group.results])


# Step 2: Keras's schedule; gradlab's way exact (3.5 spacings), no accuracy change; Keras's losses miss 31.8%, 4.2 to 5.3 points
cosine_ours, keras_c = measured["cosine lr schedule"][1:]
assert [r.config.strategy for r in keras_c.results] == ["keras"] * 3
_ref = [r.losses for r in measured["cosine lr schedule"][0].results]
_vc = verdict([r.losses for r in cosine_ours.results], _ref), verdict([r.losses for r in keras_c.results], _ref)
assert _vc == ("exact: 3.5 spacings", "miss 31.8%"), _vc
assert np.all(np.abs(change(cosine_ours)) < 0.05)
assert [round(c, 1) for c in (change(keras_c).max(), change(keras_c).min())] == [-4.2, -5.3]
# c15: "Each seed's accuracy drop against its own large batch, 4.2 to 5.3 points, is no luck of the seed: Step 3
# pairs the seeds ... its paired interval, -4.8 +- 1.4 points, excludes zero"; each drop is also over twice Step 1's
# seed-to-seed spread of the constant-rate large batch
_spread = 100 * (acc_large.max() - acc_large.min())
assert f"{_spread:.1f}" == "1.5" and np.all(-change(keras_c) > 2 * _spread), (_spread, change(keras_c))
assert keras_c.results[0].config.updates == 150 and round(150 / 4) == 38  # "spent after about 38"
assert 0.7 < (150 - 38) / 150 < 0.8  # "Keras's way is 0 from update 38 on, about the last three quarters of the run"
assert [f"{x:.2f}" for x in flat["Keras's way"]] == ["0.46", "0.45"], flat
assert [f"{x:.2f}" for x in flat["large batch"]] == ["0.34", "0.22"], flat
assert "{:+.1f} ± {:.1f}".format(*schedule_iv) == "-4.8 ± 1.4" and abs(schedule_iv[0]) > schedule_iv[1]
assert np.allclose(schedule_iv, seed_gaps.interval(paired_gaps(keras_c, measured["cosine lr schedule"][0])))
# the fix, 06's PerUpdate (gradlab's); printed, the rate each update applies: Keras's way is spent (0) from
# update 38 on, once an update it is still 0.43 there and ends near 0 at 150
assert fixed is gl.lessons.PerUpdate and set(rates) == {"Keras's way", "once an update", "in micro-batches"}
# c14: Keras's own fix, the schedule written in micro-batches (CosineDecay(0.5, 150 * N)): "within 0.004 of once an update
# at every update (update k reads micro-batch 4k - 1)"; it too ends near 0 at 150
_micro_sched = rates["in micro-batches"]
_k = np.arange(1, 151)
assert f"{np.max(np.abs(_micro_sched - rates['once an update'])):.3f}" == "0.004", _micro_sched
assert np.allclose(_micro_sched, keras.optimizers.schedules.CosineDecay(0.5, 600)(4 * _k - 1).numpy(), atol=1e-5)
assert np.allclose(rates["once an update"], cosine(_k - 1).numpy(), atol=1e-5)  # PerUpdate: update k reads update k - 1
assert _micro_sched[-1] < 1e-3 and np.all(_micro_sched[37:] > 0), _micro_sched
_spent = int(np.argmax(rates["Keras's way"] == 0)) + 1  # the first update at a rate of exactly zero
assert _spent == 38 and np.all(rates["Keras's way"][37:] == 0) and len(rates["Keras's way"]) == 150, _spent
assert f"{rates['once an update'][37]:.2f}" == "0.43" and rates["once an update"][-1] < 1e-3, rates["once an update"]
# the rates by hand (a lone weight, gradient 1, Keras's gradient_accumulation_steps) are gradlab's applied_rates, bit for bit
assert np.array_equal(rates["Keras's way"], lab_rates) and verdict(rates["Keras's way"], lab_rates) == "exact: 0 spacings, bit for bit"
assert np.array_equal(rates["once an update"], gl.lessons.keras_accumulation.applied_rates(fixed(cosine, 4), 4, updates=150))
# Keras documents it: "below: 37 after 150 micro-batches": opt.iterations floor-divides the count the schedule reads
# (CosineDecay(0.5, 150) at 150: spent)
assert int(opt.iterations) == 37 == 150 // 4 and int(opt._iterations) == 150 and float(opt.learning_rate) == 0.0

# Step 3: BatchNorm per micro-batch +0.5 to +1.1 a seed, per update +0.0 to +0.5, against the large batch; the two
# ways' losses bit for bit equal (the same weights), per micro-batch above per update on every seed; intervals
# +0.7 ± 0.8 and +0.2 ± 0.6 (both hold zero), per micro-batch - per update +0.5 ± 0.2 (excludes it)
# the learner's paired interval equals gradlab's seed_gaps.interval of paired_gaps on each
assert [g.results[0].config.batchnorm for g in measured[bn]] == ["micro", "window", "micro"]
# "Here Measure's third run is gradlab's fused with batchnorm="micro", not Keras's accumulation"
assert [g.results[0].config.strategy for g in measured[bn]] == ["large_batch", "fused", "fused"]
# the printed layers (BatchNorm after the hidden Dense) are those of the model each run trains
_trained_layers = [[type(layer).__name__ for layer in m.layers] for w in tested for m in tested[w][2]]
assert layers == ["Flatten", "Dense", "BatchNormalization", "Activation", "Dense"] and all(
    t == layers for t in _trained_layers), (layers, _trained_layers)
assert [g.results[0].config.micro_batch for g in measured[bn][1:]] == [25, 25]  # "25 rows a micro-batch"
# Answer: "Both losses miss the large batch's by 15.1%, BatchNorm's own inexactness"
_bn_ref = [r.losses for r in measured[bn][0].results]
assert [verdict([r.losses for r in g.results], _bn_ref) for g in measured[bn][1:]] == ["miss 15.1%"] * 2
assert same_weights == 0 and all(np.array_equal(a.losses, b.losses) for a, b in
                                 zip(measured[bn][1].results, measured[bn][2].results)), same_weights
_micro, _window = gaps["per micro-batch - large batch"], gaps["per update - large batch"]
_pair = gaps["per micro-batch - per update"]
assert np.allclose(_micro, change(measured[bn][2])) and np.allclose(_window, change(measured[bn][1]))
assert np.allclose(_pair, _micro - _window) and np.all(_pair > 0), _pair  # "beats per update on every seed"
assert np.all(_micro > 0) and [f"{x:+.1f}" for x in (_micro.min(), _micro.max())] == ["+0.5", "+1.1"], _micro
assert np.all(_window >= 0) and [f"{x:+.1f}" for x in (_window.min(), _window.max())] == ["+0.0", "+0.5"], _window
# "per micro-batch tests higher ... on every seed, per update on two seeds of three" (the third +0.0: no digit apart)
assert np.sum(_micro > 0.05) == 3 and np.sum(_window > 0.05) == 2 and np.sum(np.abs(_window) < 0.05) == 1, _window
_ivs = {k: "{:+.1f} ± {:.1f}".format(*iv) for k, iv in ivs.items()}
assert _ivs == {"per micro-batch - large batch": "+0.7 ± 0.8", "per update - large batch": "+0.2 ± 0.6",
                "per micro-batch - per update": "+0.5 ± 0.2"}, _ivs
assert all(np.allclose(ivs[k], seed_gaps.interval(paired_gaps(w, r))) for k, (r, w) in cases.items())
assert all(abs(ivs[k][0]) <= ivs[k][1] for k in ("per micro-batch - large batch", "per update - large batch"))
assert abs(ivs["per micro-batch - per update"][0]) > ivs["per micro-batch - per update"][1]
# Step 3's Answer: "Per micro-batch leads by +0.7 ± 0.8 points (below): -0.1 to +1.5, holding zero"
_m, _h = ivs["per micro-batch - large batch"]
assert f"{_m:+.1f}" == "+0.7" and _m - _h < 0 < _m + _h, (_m, _h)
assert (f"{_h:.1f}", f"{_m - _h:+.1f}", f"{_m + _h:+.1f}") == ("0.8", "-0.1", "+1.5"), (_m, _h)
# c20, the two suspects: "150 moves ... keep 22% of it, 600 keep 0.2%"; staleness: "about 1/(1 - 0.99) = 100 moves,
# 100 updates per update but 25 per micro-batch"
# the moving statistics: momentum 0.99; by arithmetic, 150 moves per update, 600 per micro-batch (N = 4) keep 22% and 0.2% of the
# start; every seed's run of all three ways is retrained and settled on the training set (gradlab's settle, "precise BN")
assert norm.momentum == 0.99 and measured[bn][1].results[0].config.updates == 150
assert [type(i).__name__ for i in (norm.moving_mean_initializer, norm.moving_variance_initializer)] == ["Zeros", "Ones"]
assert measured[bn][2].results[0].config.accum_steps == 4 and 150 * 4 == 600
# Step 3's two rules: per update (gradlab's "window") moves once on the update's 100 rows pooled, per micro-batch
# ("micro", Keras's) on each 25-row micro-batch, four moves an update
_cfgs = [g.results[0].config for g in measured[bn][1:]]
assert [c.batchnorm for c in _cfgs] == ["window", "micro"] and all((c.accum_steps, c.micro_batch) == (4, 25) for c in _cfgs)
assert (f"{0.99 ** 150:.0%}", f"{0.99 ** 600:.1%}") == ("22%", "0.2%")
# "the lag of an average over about the last 1/(1 - 0.99) = 100 moves": momentum 0.99's effective window, by arithmetic
assert round(1 / (1 - norm.momentum)) == 100 and 100 // 4 == 25
assert [r.config.seed for g in measured[bn][1:] for r in g.results] == [0, 1, 2] * 2
# each seed's run retrained by settle is the lab's (its accuracy as trained, to the digit), for all three ways
for w, g in zip(tested, measured[bn]):
    assert [f"{a:.1f}" for a in tested[w][0]] == [f"{100 * r.accuracy:.1f}" for r in
                                                  sorted(g.results, key=lambda r: r.config.seed)], (w, tested[w][0])
# c26: "Settled, per update tests the same (same weights, 0.0 apart)"; on seeds 0 to 2 removing the start lifts
# per update's runs, not per micro-batch's (0.2% of it left)
start_out = {w: np.array([e["tests"][1] for e in logs[w][:3]]) for w in tested}
_lift = {w: np.round(start_out[w] - np.array(tested[w][0]), 1) for w in tested}
assert np.all(_lift["per update"] > 0) and np.all(_lift["per micro-batch"] == 0), _lift
assert tested["per micro-batch"][1] == tested["per update"][1], tested
assert weights_apart == 0.0 and f"{weights_apart}" == "0.0", weights_apart
# the start-removed gap of the pair on seeds 0 to 2, +0.2 ± 0.6 (printed beside the 12 seeds')
_three = np.round(start_out["per micro-batch"] - start_out["per update"], 1)
_iv = seed_gaps.interval(_three)
assert "{:+.1f} ± {:.1f}".format(*_iv) == "+0.2 ± 0.6" and _iv[0] - _iv[1] < 0, _iv
# "your precise BN writes settle's statistics bit for bit", the accuracies it gives settle's (at most 0.0 points apart)
assert precise in (my_training_set_statistics, solution_training_set_statistics)
assert yours_vs_settle == 0 and accuracy_apart == 0 and f"{accuracy_apart:.1f}" == "0.0", (yours_vs_settle, accuracy_apart)
# nine more seeds of all three ways (seeds 3 to 11), each run as settle's: 12 seeds; their seeds 0 to 2 are settle's
assert [len(logs[w]) for w in logs] == [12, 12, 12]
for w in logs:
    assert [e["tests"][0] for e in logs[w][:3]] == list(tested[w][0]) and [e["tests"][2] for e in logs[w][:3]] == list(tested[w][1])
# interval_of is Step 2's paired interval (seed_gaps.interval's formula) on 3 seeds
assert all(np.allclose(interval_of(d[:3]), seed_gaps.interval(d[:3])) for d in twelve.values())
assert list(twelve) == ["settled: per micro-batch - large batch", "settled: per update - large batch",
                        "as trained: per micro-batch - per update", "start removed: per micro-batch - per update"]
assert all(len(d) == 12 for d in twelve.values())
_iv3 = {k: "{:+.1f} ± {:.1f}".format(*interval_of(d[:3])) for k, d in twelve.items()}
_iv12 = {k: "{:+.1f} ± {:.1f}".format(*interval_of(d)) for k, d in twelve.items()}
# seeds 0 to 2: the settled gap to the large batch +0.2 ± 0.4 (gaps +0.1, +0.1, +0.4 from the table); the pair as trained
# is c19's +0.5 ± 0.2, start removed +0.2 ± 0.6
assert _iv3["settled: per micro-batch - large batch"] == "+0.2 ± 0.4", _iv3
assert list(twelve["settled: per micro-batch - large batch"][:3]) == [0.1, 0.1, 0.4], twelve
assert _iv3["as trained: per micro-batch - per update"] == "+0.5 ± 0.2" and _iv3["start removed: per micro-batch - per update"] == "+0.2 ± 0.6"
assert np.allclose(twelve["as trained: per micro-batch - per update"][:3], gaps["per micro-batch - per update"])
# 12 seeds: the pair as trained +0.4 ± 0.3, start removed +0.2 ± 0.1, both excluding zero
assert _iv12["as trained: per micro-batch - per update"] == "+0.4 ± 0.3", _iv12
assert _iv12["start removed: per micro-batch - per update"] == "+0.2 ± 0.1", _iv12
_pr = [interval_of(twelve[k]) for k in list(twelve)[2:]]
assert all(m - h > 0 for m, h in _pr), _pr
# c0, c26 and the Summary: settled, per micro-batch - large batch over 12 seeds +0.1 ± 0.2 points, "within half a point"
# (the interval holds zero, both ends within 0.5); per update settled tests the same, seed by seed
_s = "settled: per micro-batch - large batch"
_m12, _h12 = interval_of(twelve[_s])
assert _iv12[_s] == "+0.1 ± 0.2" and _m12 - _h12 < 0 < _m12 + _h12 and -0.5 < _m12 - _h12 and _m12 + _h12 < 0.5, _iv12
assert np.array_equal(twelve[_s], twelve["settled: per update - large batch"]), twelve
# c26: "Three seeds' narrower +0.5 ± 0.2 was luck: their gaps sat close": 3 seeds' half-width under 12 seeds'
_a = "as trained: per micro-batch - per update"
assert interval_of(twelve[_a][:3])[1] < interval_of(twelve[_a])[1], twelve[_a]
# c26: "start removed, per update's moving mean lies 26% of its size from precise BN's, per micro-batch's 17% (medians;
# further on 12 of 12 seeds)"
_med = {w: [f"{np.median(far[w][:, j, i]):.0%}" for j in (0, 1) for i in (0, 1)] for w in pair}
# _med: (as trained, start removed) x (mean, variance)
assert _med["per update"][2] == "26%" and _med["per micro-batch"][2] == "17%", _med
assert further[0] == 12, further
# distances measured against the statistics your precise BN wrote, those of the trained weights: the pair shares them
for a, b in zip(logs["per update"], logs["per micro-batch"]):
    assert all(np.array_equal(x, y) for x, y in zip(a["best"], b["best"]))


# Problem 1: N = 8, b = 25 (B = 200) with the schedule: gradlab's way rounding-sized (12 spacings, 6.5 eps; float64 below), no accuracy
# change; Keras's way 7.7 to 8.8 points lower a seed, -8.3 ± 1.4 by your interval; its rate spent after about 19 updates
ours_8 = measured["cosine lr schedule, N = 8"][1]
assert [(g.results[0].config.accum_steps, g.results[0].config.micro_batch) for g in (ours_8, keras_8)] == [(8, 25)] * 2
assert large_8.results[0].config.micro_batch == 200 and round(150 / 8) == 19
_ref8 = [r.losses for r in large_8.results]
_v8 = verdict([r.losses for r in ours_8.results], _ref8)  # rounding-sized, past ten spacings
assert _v8 == "not exact: 12 spacings, 6.5 eps (rerun in float64)", _v8
assert np.all(np.abs(change(ours_8)) < 0.05)
_k8 = change(keras_8)
assert [round(c, 1) for c in (_k8.max(), _k8.min())] == [-7.7, -8.8], _k8
assert "{:+.1f} ± {:.1f}".format(*n8_iv) == "-8.3 ± 1.4" and np.allclose(n8_iv, seed_gaps.interval(_k8)), n8_iv
# the float64 rerun (folded): the same configs, float64 losses, "within two of float64's spacings" every loss of every
# seed; the float32 line it settles is the 12 spacings above
assert ours_64.dtype == large_64.dtype == np.float64 and ours_64.shape == large_64.shape == (3, 150)
assert [r.config for r in ours_8.results] == [r.config for r in measured["cosine lr schedule, N = 8"][1].results]
assert gap_64 <= 2 and in_float32 == _v8, (gap_64, in_float32)
# Answer 1: "The middle panel's late jump is seed 1's alone (2.9e-06 after update 100; the others under 1e-07)"
assert f"{late[3]:.1e}" == "2.9e-06" and late[1] < 1e-7 and late[5] < 1e-7 and late[3] == late[2], late
assert keras.config.floatx() == "float32" and keras.config.dtype_policy().name == "float32"  # restored

# Problem 2: uneven micro-batches at N = 4, b = 25: two of the four hold 24 rows (B = 98); Keras's 1/4 misses the large
# batch's losses by 1.37%, gradlab's way exact (1.1 spacings, no accuracy change); Keras's way's accuracy gaps +0.1,
# +0.1, -0.1 points, one test digit a seed
_un = measured["uneven micro-batches"]
assert [g.results[0].config.strategy for g in _un] == ["large_batch", "fused", "keras"]
assert [r.config.seed for g in _un for r in g.results] == [0, 1, 2] * 3
assert all(r.config.effective_batch == 98 for g in _un for r in g.results)
assert [(g.results[0].config.accum_steps, g.results[0].config.micro_batch, g.results[0].config.short_by)
        for g in _un[1:]] == [(4, 25, 2)] * 2 and uneven_large.results[0].config.micro_batch == 98
assert sorted(gl.lessons.split_sizes(98, 4)) == [24, 24, 25, 25]  # "two of the four micro-batches hold 24 rows"
_uref = [r.losses for r in _un[0].results]
_vu = [verdict([r.losses for r in g.results], _uref) for g in _un[1:]]
assert _vu == ["exact: 1.1 spacings", "miss 1.37%"], _vu
assert np.all(np.abs(paired_gaps(_un[1], _un[0])) < 0.05)
assert [f"{x:+.1f}" for x in paired_gaps(_un[2], _un[0])] == ["+0.1", "+0.1", "-0.1"], paired_gaps(_un[2], _un[0])
assert uneven_ours is _un[1] and uneven_keras is _un[2]
# Answer 2's picture: "Keras's loss gap (purple) sits near 1e-2, gradlab's under 1e-6" (the middle panel: the largest gap
# over seeds, update by update)
_ugap = [np.max(np.abs(np.subtract([r.losses for r in g.results], _uref)), axis=0) for g in _un[1:]]
assert np.max(_ugap[0]) < 1e-6 and 1e-3 < np.median(_ugap[1][5:]) < 1e-1, (np.max(_ugap[0]), np.median(_ugap[1][5:]))
# the lab left as Step 1 set it, every control (each step's cell sets them all: step1, then the setting)
assert step1 == dict(strategy="fused", accum_steps=4, micro_batch=25, lr=0.5, seeds=3, x_axis="updates")
assert {k: getattr(lab, k).value for k in step1} == step1 and lab.setting.value == "exact"
# every Measure ran at Step 1's rate and seeds, whatever a learner moved before it
assert all(r.config.lr == 0.5 and r.config.updates == 150 for gs in measured.values() for g in gs for r in g.results)
assert all([r.config.seed for r in g.results] == [0, 1, 2] for gs in measured.values() for g in gs)

print("lesson 17: every number the prose states checks out")

# c17: "per micro-batch, as Keras does (gradlab's batchnorm="micro"; [09] checks it against a Keras BatchNormalization
# layer called once per micro-batch: exact, 2.1 spacings)" rests on 09's cell that calls a
# Keras BatchNormalization once per micro-batch and compares its moving mean and variance with (1 - rho) rho^(N - i)
# (printed "exact: 2.1 spacings" there). checks/09.py also runs Keras's own fit with gradient_accumulation_steps=4
# and asserts its moving mean and variance equal batchnorm="micro"'s ("exact"). This lesson runs gradlab's emulation
# (fused, batchnorm="micro"), not Keras's own accumulation; the prose says so.
