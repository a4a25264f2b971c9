"""Lesson 06's authors' checks: every number its prose states, re-checked on each run.

Run by the lesson's last cell (`%run -i checks/06.py`) in the notebook's namespace; each assert
fails loudly (nbval, `make notebooks`) if a run ever disagrees with the text. Not part of the lesson.
"""
# Problems 1 and 2: the numbers the folded answers rest on
rates = gl.lessons.keras_accumulation.applied_rates(keras.optimizers.schedules.CosineDecay(1.0, decay_steps=1000),
                                                    accum_steps=8, updates=127)
first_zero = int(np.argmax(rates == 0))  # answer 1: the first update that applies rate 0, indexed from 0 (update 126 from 1)
per_epoch = -(-50_000 // 64)  # answer 2: micro-batches per epoch, the last one short

assert probed == [0.0, 0.0, 0.0, -2.5] and clipped == -2.0
assert rule == [-2.5, -2.0] and rule[0] == probed[-1] and rule[1] == clipped
# the Your turn's three cases: the probe's, the probe's clipped at 2.0, seven gradients at N = 3 clipped at 2.5
assert [o.get("global_clipnorm") for _, o in cases] == [None, 2.0, 2.5] and cases[2][1]["N"] == 3 and len(cases[2][0]) == 7
assert all(d < 1e-6 for d in proofs.values()), proofs
assert relative["fed", 30] < 1e-6, relative  # rounding: bounds, not digits, so another machine passes
assert all(r < 1e-6 for k, r in relative.items() if k != ("keras", 30)), relative
assert 0.02 < relative["keras", 30] < 0.1, relative
# lesson 01's yardstick: the max |diff| in spacings at the largest weight, under ten is rounding
assert all(at_top[k] < 10 for k in ("your loop", ("fed", 30))), at_top
assert [f"{at_top[k]:.1f}" for k in ("your loop", ("fed", 30))] == ["1.0", "1.0"], at_top
assert as_miss(relative["keras", 30]) == "6.4%", relative  # the prose: "misses the large batch by 6.4%"
# misses too small for % in eps = 2^-23 (README's yardstick; under five is rounding): the prose's "The miss, 4.7
# eps" (the loop on equal micro-batches), "it matches: 4.5 eps" (fed N n_i/B g_i), "to rounding (4.3 eps)" (fit, default)
assert eps == 2.0 ** -23 and as_miss(1e-3) == "0.1%" and as_miss(2 * eps) == "2.0 eps"
assert [as_miss(r) for r in (relative["your loop", 64], relative["fed", 30], weighted_miss["sum_over_batch_size"])] \
    == ["4.7 eps", "4.5 eps", "4.3 eps"], relative
assert max(relative["your loop", 64], relative["fed", 30], weighted_miss["sum_over_batch_size"]) < 5 * eps
# "one spacing of a weight is several eps of the move": the move is read off weights many times its size
_u = np.concatenate([np.ravel(np.asarray(a) - np.asarray(b)) for a, b in zip(oracle.trainable_variables, w_start)])
_w = np.concatenate([np.ravel(np.asarray(a)) for a in oracle.trainable_variables])
assert np.abs(_w).max() > 10 * np.abs(_u).max() and np.linalg.norm(_w) > 10 * np.linalg.norm(_u), (_w, _u)
# fit fed sample_weight N n_i / B: "Under the default, fit matches the large batch to rounding; under
# "mean_with_sample_weight" it misses as the plain g_i do, by 6.4%" (the weights' factor cancels in each micro-batch)
assert weighted_miss["sum_over_batch_size"] < 1e-6, weighted_miss
assert abs(weighted_miss["mean_with_sample_weight"] - relative["keras", 30]) < 1e-4, (weighted_miss, relative)
assert as_miss(weighted_miss["mean_with_sample_weight"]) == "6.4%", weighted_miss
# Going further, schedules: "its three updates read the steps 3, 7 and 11, not 0, 1 and 2"; PerUpdate reads 0, 1, 2
assert read == [3, 7, 11] and read_fixed == [0, 1, 2]
assert steps_read(gl.lessons.PerUpdate(schedule, 4)) == [0, 1, 2]
# "a CosineDecay written for 64 updates applies 6.0e-05 at update 16 and 0.0 from update 17 on: it is spent a
# quarter of the way through" (update k reads step 4k - 1)
assert len(raw) == 17 and raw[15] > 0 and raw[16] == 0 and f"{raw[15]:.1e}" == "6.0e-05" and 4 * 16 - 1 < 64 <= 4 * 17 - 1
_all = gl.lessons.keras_accumulation.applied_rates(cosine, 4, updates=64)
assert np.array_equal(_all[:17], raw) and (_all[16:] == 0).all() and 16 / 64 == 1 / 4
# "Adam's bias correction reads the public iterations: it counts updates": Adam(1.0), N = 4, gradient 1, one update
# moves the weight by Adam's step 1 (1.000), not its step 4 (0.581)
_adam_w, _adam = keras.Variable(np.zeros(1, np.float32)), keras.optimizers.Adam(1.0, gradient_accumulation_steps=4)
for _ in range(4):
    _adam.apply_gradients([(np.ones(1, np.float32), _adam_w)])
_move = {s: np.sqrt(1 - 0.999**s) / (1 - 0.9**s) * 0.1 / np.sqrt(0.001) for s in (1, 4)}
assert abs(-float(_adam_w.numpy()[0]) - _move[1]) < 1e-3 and abs(_move[4] - 0.581) < 1e-3, _move
# "gradlab's PerUpdate is the same, plus the get_config and from_config that saving a model needs"
rebuilt = gl.lessons.PerUpdate.from_config(gl.lessons.PerUpdate(schedule, 4).get_config())
assert rebuilt.accum_steps == 4 and steps_read(rebuilt) == [0, 1, 2], rebuilt.get_config()
try:
    SolutionPerUpdate(schedule, 4).get_config()
    raise AssertionError("the solution's PerUpdate has a get_config: the note says only gradlab's does")
except NotImplementedError:
    pass
assert PerUpdate in (MyPerUpdate, SolutionPerUpdate)  # the Your turn's class, or the solution while it is the stub
# "Update k (from 1) reads step 8k - 1, first at least 1,000 at k = 126 (1,007): after 125 updates, an eighth of the
# 1,000 planned, the rate is 0"
assert 8 * 126 - 1 == 1007 >= 1000 > 8 * 125 - 1
assert first_zero == 125 and (rates[first_zero:] == 0).all() and rates[first_zero - 1] > 0 and 125 / 1000 == 1 / 8
assert (per_epoch, 50_000 - 64 * (per_epoch - 1), per_epoch % 8, 50_000 % 125, 50_000 // 125 % 8) == (782, 16, 6, 0, 0)
assert (50_000 // 64, 50_000 // 64 % 8) == (781, 5)
# answer 2's ways out: batch_size 50 -> 1,000 micro-batches = 125 x 8, updates of 400 rows; batch_size 125 -> 400
# micro-batches = 50 x 8, updates of 1,000; at 64, a cut to whole updates takes 776 = 97 x 8 micro-batches, 49,664 rows, 336 left
assert (50_000 % 50, 50_000 // 50, 50_000 // 50 % 8, 50_000 // 50 // 8, 50 * 8) == (0, 1000, 0, 125, 400)
assert (50_000 % 125, 50_000 // 125 % 8, 50_000 // 125 // 8, 125 * 8) == (0, 0, 50, 1000)
assert (50_000 // 64 // 8 * 8, 50_000 // 64 // 8, 97 * 512, 50_000 - 97 * 512) == (776, 97, 49_664, 336)
print("lesson 06: every number the prose states checks out")
