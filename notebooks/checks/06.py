"""Lesson 06's authors' checks: every number its prose states, re-checked on each run.

Run by the lesson's last cell (`%run -i checks/06.py`) in the notebook's namespace; each assert
fails loudly (nbval, `make notebooks`) if a run ever disagrees with the text. Not part of the lesson.
"""
# The epochs probe: "The first epoch ends after 6 calls and 1 update, with 2 calls' gradients waiting; the two epochs
# give the weights of the 12 calls (bit for bit)" (Keras empties the accumulators only at an update; verdict prints
# "exact: 0 spacings, bit for bit" only when every entry is equal)
assert [(c, u) for c, u, _ in seen] == [(6, 1), (12, 3)] and seen[0][2] > 0 and seen[1][2] == 0, seen
assert verdict(two_epochs.trainable_variables, by_hand.trainable_variables) == "exact: 0 spacings, bit for bit"
# Problems 1 and 2: the numbers the folded answers rest on
rates = gl.lessons.keras_accumulation.applied_rates(keras.optimizers.schedules.CosineDecay(1.0, decay_steps=1000),
                                                    accum_steps=8, updates=127)
first_zero = int(np.argmax(rates == 0))  # answer 1: the first update that applies rate 0, indexed from 0 (update 126 from 1)
per_epoch = -(-50_000 // 64)  # answer 2: micro-batches per epoch, the last one short

assert probed == [0.0, 0.0, 0.0, -2.5] and clipped == -2.0
# "applies weight decay once an update (...: with weight_decay=0.1 a lone weight at 1.0 reads 0.90 after four calls,
# decayed once)": SGD(1.0)'s decay w - w * 0.1 * 1.0, once; at every call it would read 0.9 ** 4 = 0.66
assert abs(float(decayed.numpy()[0]) - 0.9) < 1e-6 and int(wd_opt.iterations.numpy()) == 1, decayed
assert rule == [-2.5, -2.0] and rule[0] == probed[-1] and rule[1] == clipped
# the Your turn's three cases: the probe's, the probe's clipped at 2.0, seven gradients at N = 3 clipped at 2.5
assert [o.get("global_clipnorm") for _, o in cases] == [None, 2.0, 2.5] and cases[2][1]["N"] == 3 and len(cases[2][0]) == 7
# the loop on all 64 rows (the MLP's first cell, which keeps no bookkeeping): read off the names it left
proofs["your Keras loop"] = max_abs_diff(model.trainable_variables, oracle.trainable_variables)
relative["your loop", 64] = share_of_move(model.trainable_variables, oracle.trainable_variables)
at_top["your loop"] = spacings(model.trainable_variables, oracle.trainable_variables)
at_top["keras strategy"] = spacings(s.model.trainable_variables, model.trainable_variables)
assert all(d < 1e-6 for d in proofs.values()), proofs
assert relative["fed", 30] < 1e-6, relative  # rounding: bounds, not digits, so another machine passes
assert all(r < 1e-6 for k, r in relative.items() if k != ("keras", 30)), relative
assert 0.02 < relative["keras", 30] < 0.1, relative
# lesson 01's yardstick: the max |diff| in spacings at the largest weight, under ten is rounding
assert all(at_top[k] < 10 for k in ("your loop", ("fed", 30))), at_top
assert [f"{at_top[k]:.1f}" for k in ("your loop", ("fed", 30))] == ["1.0", "1.0"], at_top
# "gradlab's keras strategy hands Keras the same g_i, so it is the loop bit for bit" (printed by as_spacings)
assert at_top["keras strategy"] == 0 and as_spacings(at_top["keras strategy"]) == "0 spacings, bit for bit", at_top
assert 0.02 < relative["keras", 30] < 0.1 and as_miss is gl.lessons.as_miss, relative  # "misses the large batch by 6.43%"
# share_of_move is gradlab's miss of the move from w_start: the prose's "6.43% of its three updates' move"
assert share_of_move(large.model.trainable_variables, large.model.trainable_variables) == 0.0
# "exact: 1.0 spacings" (gradlab's verdict): the loop, fed N n_i/B g_i, and fit under the default reduction
assert at_top["fit", "sum_over_batch_size"] <= 10 < at_top["fit", "mean_with_sample_weight"], at_top
assert f'{at_top["fit", "sum_over_batch_size"]:.1f}' == "1.0", at_top
assert max(relative["your loop", 64], relative["fed", 30], weighted_miss["sum_over_batch_size"]) < 1e-6
# fit fed sample_weight N n_i / B: "Under the default, fit matches the large batch to rounding; under
# "mean_with_sample_weight" it misses as the plain g_i do: a miss of 6.43%" (the weights' factor cancels in each micro-batch)
assert weighted_miss["sum_over_batch_size"] < 1e-6, weighted_miss
assert abs(weighted_miss["mean_with_sample_weight"] - relative["keras", 30]) < 1e-4, (weighted_miss, relative)
assert as_miss(weighted_miss["mean_with_sample_weight"]) == as_miss(relative["keras", 30]) == "6.43%", weighted_miss
# Schedules: "its three updates read the steps 3, 7 and 11, not 0, 1 and 2"; PerUpdate reads 0, 1, 2
assert read == [3, 7, 11] and read_fixed == [0, 1, 2]
assert steps_read(gl.lessons.PerUpdate(schedule, 4)) == [0, 1, 2]
# "a CosineDecay written for 64 updates applies 6.0e-05 at update 16 and 0.0 from update 17 on: it is spent a
# quarter of the way through" (update k reads step 4k - 1)
assert len(raw) == 17 and raw[15] > 0 and raw[16] == 0 and f"{raw[15]:.1e}" == "6.0e-05" and 4 * 16 - 1 < 64 <= 4 * 17 - 1
_all = gl.lessons.keras_accumulation.applied_rates(cosine, 4, updates=64)
assert np.array_equal(_all[:17], raw) and (_all[16:] == 0).all() and 16 / 64 == 1 / 4
# the figure: "the raw curve falls to 0 in a quarter of the run"; PerUpdate's "spans all 64 updates", the schedule
# as written (one call an update), within ten spacings at the weight (a rate is read off the lone weight)
_written = gl.lessons.keras_accumulation.applied_rates(cosine, None, updates=64)
assert len(wrapped) == 64 and (wrapped > 0).all() and np.abs(wrapped - _written).max() <= 10 * np.spacing(np.float32(wrapped.sum()))
# "Adam's bias correction, by contrast, reads the public iterations: it counts updates. One update of Adam(1.0) at
# N = 4, fed the gradient 1, moves the lone weight 1.000, the size of Adam's first step, not the 0.581 that step 4
# would give (the last line)": the probe in the schedules' cell (main line), checked against Adam's formula here
assert isinstance(adam, keras.optimizers.Adam) and adam.gradient_accumulation_steps == 4 and int(adam.iterations.numpy()) == 1
_move = {t: np.sqrt(1 - 0.999**t) / (1 - 0.9**t) * 0.1 / np.sqrt(0.001) for t in (1, 4)}
assert all(abs(as_step[t] - _move[t]) < 1e-9 for t in (1, 4)), (as_step, _move)
assert abs(-float(adam_w.numpy()[0]) - _move[1]) < 1e-3 and abs(_move[4] - 0.581) < 1e-3, _move
assert (f"{-float(adam_w.numpy()[0]):.3f}", f"{as_step[1]:.3f}", f"{as_step[4]:.3f}") == ("1.000", "1.000", "0.581")
# "gradlab's adds the get_config and from_config that saving a model needs"
rebuilt = gl.lessons.PerUpdate.from_config(gl.lessons.PerUpdate(schedule, 4).get_config())
assert rebuilt.accum_steps == 4 and steps_read(rebuilt) == [0, 1, 2], rebuilt.get_config()
try:
    PerUpdate(schedule, 4).get_config()
    raise AssertionError("the lesson's PerUpdate has a get_config: the note says only gradlab's adds it")
except NotImplementedError:
    pass
assert PerUpdate is not gl.lessons.PerUpdate  # the folded cell's own class, the one whose steps it prints
# "Update k (from 1) reads step 8k - 1, first at least 1,000 at k = 126 (1,007): the rate is 0 from update 126 on,
# so the schedule is spent after 125 updates, an eighth of the 1,000 planned"
assert 8 * 126 - 1 == 1007 >= 1000 > 8 * 125 - 1
assert first_zero == 125 and (rates[first_zero:] == 0).all() and rates[first_zero - 1] > 0 and 125 / 1000 == 1 / 8
assert (per_epoch, 50_000 - 64 * (per_epoch - 1), per_epoch % 8, 50_000 % 125, 50_000 // 125 % 8) == (782, 16, 6, 0, 0)
assert (50_000 // 64, 50_000 // 64 % 8) == (781, 5)
# answer 2's ways out: batch_size 50 -> 1,000 micro-batches = 125 x 8, updates of 400 rows; batch_size 125 -> 400
# micro-batches = 50 x 8, updates of 1,000; at 64, a cut to whole updates takes 776 = 97 x 8 micro-batches, 49,664 rows, 336 left
assert (50_000 % 50, 50_000 // 50, 50_000 // 50 % 8, 50_000 // 50 // 8, 50 * 8) == (0, 1000, 0, 125, 400)
assert (50_000 % 125, 50_000 // 125 % 8, 50_000 // 125 // 8, 125 * 8) == (0, 0, 50, 1000)
assert (50_000 // 64 // 8 * 8, 50_000 // 64 // 8, 97 * 512, 50_000 - 97 * 512) == (776, 97, 49_664, 336)
# c0: "Keras 3 only (TensorFlow's default from 2.16) ... The setup prints the versions"; the private names read here are
# 3.15's (the References pin 3.15.1)
assert keras.__version__.startswith("3.15.") and tuple(int(v) for v in tf.__version__.split(".")[:2]) >= (2, 16)
# c16: "The +-1/60 sets which way, not how far: on the first update the miss is (1/60) |g1 + g2 - g3 - g4| / |g_B| = 4.69%
# because each micro-batch's gradient ... is 1.6 to 1.8 times as long as g_B, and their signed sum 2.8 times"
assert gl.split_sizes(30, 4) == [8, 8, 7, 7] and abs(1 / 4 - 8 / 30 + 1 / 60) < 1e-12 and abs(1 / 4 - 7 / 30 - 1 / 60) < 1e-12
_w = [1 / 4 - n / 30 for n in (8, 8, 7, 7)]  # Keras's weight minus the large batch's, per micro-batch
assert abs(np.linalg.norm(sum(w * g for w, g in zip(_w, (g1, g2, g3, g4)))) / np.linalg.norm(g_B) - first_miss) < 1e-6
assert f"{first_miss:.2%}" == "4.69%" and (f"{min(lengths):.1f}", f"{max(lengths):.1f}") == ("1.6", "1.8"), (first_miss, lengths)
assert f"{np.linalg.norm(g1 + g2 - g3 - g4) / np.linalg.norm(g_B):.1f}" == "2.8"
# c17: "callbacks fire once a micro-batch (the cell counts 12 for 3 updates)"
assert {r: len(b) for r, b in batch_ends.items()} == {"sum_over_batch_size": 12, "mean_with_sample_weight": 12}, batch_ends
assert int(weighted_fit.optimizer.iterations) == 3
# c19 quotes the gradient_accumulation_steps docstring whole (both sentences): its "optimizer steps" are calls
import inspect as _inspect
import keras.src.optimizers.base_optimizer as _base_optimizer
_doc = " ".join(_inspect.getsource(_base_optimizer).split())
assert ('EMA frequency will look at "accumulated" iterations value (optimizer steps // gradient_accumulation_steps). '
        'Learning rate schedules will look at "real" iterations value (optimizer steps).') in _doc
print("lesson 06: every number the prose states checks out")
