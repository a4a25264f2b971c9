"""Lesson 10's authors' checks: every number its prose states, re-checked on each run.

Run by the lesson's last cell (`%run -i checks/10.py`) in the notebook's namespace; each assert
fails loudly (nbval, `make notebooks`) if a run ever disagrees with the text. Not part of the lesson.
"""
assert probed == [0.0, 0.0, 0.0, -2.5] and theirs == probed and clipped == -2.0
assert proofs["your Keras loop"] < 1e-6 and all(d < 1e-6 for k, d in proofs.items() if k not in ("keras, 30", "fit, the weights alone", "fit, the rows alone", "fit, both")), proofs
assert relative["fed", 30] < 1e-6, relative  # rounding: bounds, not digits, so another machine passes
assert proofs["keras, 30"] > 1e-4 and 0.02 < relative["keras", 30] < 0.1, relative
assert all(r < 1e-6 for k, r in relative.items() if k not in (("keras", 30), ("fit", "the weights alone"), ("fit", "the rows alone"), ("fit", "both")) and k[0] != "adam"), relative
assert [1 / 4 - n / 30 for n in sizes] == [1 / 4 - 8 / 30] * 2 + [1 / 4 - 7 / 30] * 2 and abs(1 / 4 - 8 / 30 + 1 / 60) < 1e-12
assert read == [3, 7, 11] and counted == [0, 1, 2] and read_fixed == [0, 1, 2]
assert [round(peaks[k], 1) for k in (("keras", 8, 1), ("plain", 8, 1), ("plain", 1, 1))] == [41.3, 41.2, 328.1], peaks
assert first_zero == 125 and (rates[first_zero:] == 0).all()
assert (per_epoch, 50_000 - 64 * (per_epoch - 1), per_epoch % 8, 50_000 % 125, 50_000 // 125 % 8) == (782, 16, 6, 0, 0)
assert rule == [-2.5, -2.0] and rule[0] == probed[-1] and rule[1] == clipped
assert all(relative["adam", n, b] < 1e-6 for n, b in (("accumulate", 64), ("accumulate", 30), ("keras", 64))), relative
assert 0.015 < relative["adam", "sum", 64] < 0.03 and all(0.08 < relative["adam", n, 30] < 0.15 for n in ("keras", "sum")), relative
assert relative["adam", "sum, epsilon=4e-7", 64] < 1e-6 and [round(cost[k], 2) for k in cost] == [0.78, 0.15], (relative, cost)
assert [round(mib[k]) for k in (1, 4, 5)] == [3815, 15259, 19073]
assert [len(runs[n][1]) for n in runs] == [8, 34, 32] and [len(windows[n][0]) for n in windows] == [8] * 3, windows
assert windows["Keras 4 x 16, kept"][0][4] == (256, 310, (6, 48)) and windows["Keras 4 x 16, kept"][1] == (502, 524, (22,))
assert windows["Keras 4 x 16, dropped"] == windows["plain fit at 64, dropped"] == (windows["plain fit at 64, dropped"][0], None)
assert relative["fit", "neither"] < 1e-6 and 0.05 < relative["fit", "both"] < 0.3 and proofs["fit, both"] > 1e-4, relative
assert 1e-3 < relative["fit", "the weights alone"] < relative["fit", "the rows alone"] < 0.3, relative  # the prose's order
assert (50_000 // 64, 50_000 // 64 % 8) == (781, 5)
assert second[False][0] == 34 and second[False][1] > 0.01 and second[False][2] == [8, 9, 9, 9], second
assert second[True][:2] == (32, 0.0) and second[True][2] == [8, 8, 8, 9], second
assert ema[7:] == [(-2.0, -1.5), (-2.0, -1.75), (-2.0, -1.875), (-2.0, -1.9375), (-3.0, -2.46875)], ema
