"""Lesson 22's authors' checks: re-check every number the prose states, as the prose rounds it,
against the names the notebook has just computed.

Run by the lesson's last code cell (`%run -i checks/22.py`), so nbval fails when a run disagrees
with the text. Not part of the lesson. Every number is the same on each run (seeded numpy, a fresh
process's allocator) except the one timing, asserted only in a band that holds on any machine
yet fails if four sorts' ratio to one were far from the 4 the work fixes (3 to 5.5 times),
and the nine peak readings of one update, whose spread is printed and banded here (under a tenth). The
trajectory table (two float32 orders over 100 updates) is the same on each run on one machine; its digits are pinned
where the stored ones recur, and banded for other BLAS libraries.
"""
import numpy as np

# h22x: my_spacings became my_pairwise_sum (r25 22-F6); the spacing count is re-derived here
_sp_at = lambda a, b, at: abs(float(a) - float(b)) / float(np.spacing(np.float32(abs(at))))  # noqa: E731
assert count_pairwise in (my_pairwise_sum, solution_pairwise_sum)
# a sum whose terms cancel: "16.1 spacings at the sum, 5.6, but 4.0 at the largest running total, 21.3" (over ten
# at the sum, under it where the additions rounded)
_at_sum, _at_top = _sp_at(total, exact_c, exact_c), _sp_at(total, exact_c, top)
assert (f"{exact_c:.1f}", f"{top:.1f}", f"{_at_sum:.1f}", f"{_at_top:.1f}") == ("5.6", "21.3", "16.1", "4.0")
assert _at_sum > 10 > _at_top and abs(exact_c) < top
# Problem 1 with it: 3.0e-08 at 0.3 is one spacing (to the digits printed), 5.1e-07 is 17
assert round(_sp_at(0, 3.0e-08, 0.3)) == 1 and round(_sp_at(0, 5.1e-07, 0.3)) == 17
# h22x: pairwise sums of c5's 20 sequences (deterministic: seeded data, float32 arithmetic in a fixed order)
_pair = np.abs(paired - exact5[:, -1]) / at
assert np.median(_pair) < 1 < np.median(grow[10**5][0]) / 10 and paired.dtype == np.float32, _pair
# c10 "In pairs, the median falls from 31.5 spacings to 0.3 (worst: 124.0 to 0.9). A median of 20 is noisy: ten groups
# of 20 more sums give medians 1.1 to 1.7 at 100 terms (the walk: 1.3; ours: 1.9) and 29.4 to 47.7 at 10^5 (40.7; 31.5)"
assert (f"{np.median(_pair):.1f}", f"{_pair.max():.1f}", f"{np.median(grow[10**5][0]):.1f}") == ("0.3", "0.9", "31.5"), _pair
assert [f"{noise[k].min():.1f} to {noise[k].max():.1f}" for k in (100, 10**5)] == ["1.1 to 1.7", "29.4 to 47.7"], noise
assert noise[100].shape == (10,) and f"{walk[0]:.1f}" == "1.3" and f"{walk[-1]:.1f}" == "40.7"
assert f"{np.median(grow[100][0]):.1f}" == "1.9" and not noise[100].min() <= np.median(grow[100][0]) <= noise[100].max()
# gradlab's printer against the learner's construction: "gradlab's `spacings` counts as yours does (second line)...
# Its `verdict` says "exact" within ten (`ROUNDING`). Past ten ... the sum's 16.1 spacings are 11.5 `eps`"; exact at
# the running total
from gradlab.studies.yardstick import ROUNDING as _gradlabs_ten
assert ROUNDING == _gradlabs_ten == 10 and spacings is gl.lessons.spacings and verdict is gl.lessons.verdict
assert abs(spacings(total, exact_c) - _at_sum) < 1e-9 and abs(spacings(total, exact_c, at=top) - _at_top) < 1e-9
assert verdict(total, exact_c) == "not exact: 16 spacings, 11.5 eps (rerun in float64)", verdict(total, exact_c)
# "under 100 `eps` `verdict` prints "not exact" and asks for a float64 rerun, as here; over it, a "miss"" (gradlab's
# RERUN)
from gradlab.studies.yardstick import RERUN as _rerun, beyond as _beyond
assert _rerun == 100 and _beyond(16.1, 99 * eps).startswith("not exact") and _beyond(16.1, 100 * eps).startswith("miss")
assert verdict(total, exact_c, at=top) == "exact: 4.0 spacings"


def _sp(a, b):  # signed, in spacings at the 1,000-number sum
    return (float(a) - float(b)) / one


# Rounding: forwards, backwards, 8 micro-batches
assert f"{exact:.0f}" == "516" and one == 2.0**-14
assert f"{_sp(backwards, forwards):+.1f}" == "+3.0" and f"{_sp(in_8, forwards):+.1f}" == "-4.0"
assert f"{_sp(forwards, exact):.1f}" == "3.7" and abs(_sp(in_8, exact)) < 1  # none is the right one
assert f"{eps:.3g}" == "1.19e-07" and eps == 2.0**-23  # "`eps` $= 2^{-23}$ = 1.19e-07 is the spacing at 1"
# "a spacing is half an `eps` to one `eps` of its value", as at the sum: 16.1 spacings at 5.6 are 11.5 eps
for _x in (0.3, 1.0, 516.0, 1.9, float(exact_c)):
    _k = float(np.spacing(np.float32(_x))) / (_x * eps)  # spacings per eps of relative error, inverted
    assert 1 <= 1 / _k <= 2, (_x, _k)

# the sum's error against its terms, 20 sequences (float32 cumsum adds one at a time, so the same on any CPU):
# the median "1.9 spacings at 100 terms to 31.5 at 10^5", "a fifth to a tenth of the terms' count's square root"
_med = {n: float(np.median(err)) for n, (err, _) in grow.items()}
assert xs.shape == (20, 10**5) and all(err.shape == (20,) for err, _ in grow.values())
assert (f"{_med[10**2]:.1f}", f"{_med[10**5]:.1f}") == ("1.9", "31.5"), _med
assert all(0.05 < _med[n] / np.sqrt(n) < 0.25 for n in _med), _med  # grows as sqrt(n), within a factor of 5
# "grows more slowly than the sqrt(terms) guide, a fifth of it at 100 terms, a tenth at 10^5" (a slope of about 0.41, not 1/2)
assert 0.17 < _med[10**2] / 10 < 0.23 and 0.09 < _med[10**5] / np.sqrt(10**5) < 0.11, _med
# r4: "grows roughly as sqrt(terms) (x2.84 from 10^4 to 10^5; sqrt(10) = 3.16), a random walk"
assert f"{_med[10**5] / _med[10**4]:.2f}" == "2.84" and f"{np.sqrt(10):.2f}" == "3.16"
assert all(err.max() < w / 10 for err, w in grow.values())  # each error under a tenth of the worst case
# h22: c6 "far under the worst case (dotted): (terms - 1)/2 spacings, half a spacing an addition" (all terms are
# positive, so no running total exceeds the sum and each rounding is at most half a spacing at the sum): a straight
# line, not the wobbling (terms - 1) eps/2 |sum| in spacings it replaced. "Errors of either sign partly cancel, a random
# walk: they grow about as sqrt(terms) ... The tenfold steps (2.66, 2.14, 2.84) fall under sqrt(10) = 3.16: a median
# of 20 sums is noisy" (h22 ran 200 sums offline, seeds 5 and 6: steps 3.26, 2.48, 4.09 and 3.33, 2.27, 3.41, medians
# 1.2 to 1.4 spacings at 100 terms where these 20 read 1.9; the dip at 10^4 follows the sums' place in their binade)
assert [w for _, w in grow.values()] == [(n - 1) / 2 for n in grow] and all(err.max() <= w for err, w in grow.values())
assert all(b / a < np.sqrt(10) for a, b in zip(med, med[1:])), med
# "ten spacings holds all 20 sums at 100 terms (worst 3.7) and the median at a thousand (5.2; the worst, 11.7, passes
# ten); past that, expect tens"
assert (f"{_med[10**3]:.1f}", f"{grow[10**3][0].max():.1f}") == ("5.2", "11.7")
assert f"{grow[10**2][0].max():.1f}" == "3.7" and grow[10**2][0].max() < 10 < grow[10**3][0].max()
assert _med[10**3] < 10 < _med[10**4] < _med[10**5] < 100
# c6: "past that, one number at a time, the median reaches tens and the worst passes a hundred (124.0 at 10^5)"
assert f"{grow[10**5][0].max():.1f}" == "124.0" and grow[10**5][0].max() > 100 > grow[10**4][0].max(), grow[10**5][0].max()
# "past that, expect tens (pairwise np.sum, last line: about one)": numpy sums a contiguous row in blocks, pairwise
assert pairwise.shape == (20,) and np.median(pairwise) < 1 and pairwise.max() < 2, pairwise
# "`np.sum` and `tf.reduce_sum` add in blocks: medians under one spacing at 10^5 terms. A matmul, the way a Dense layer sums its
# gradient over the batch's rows, lands between (last lines)": TensorFlow's kernels follow the CPU (the cell is
# nbval-ignored), so bands: reduce_sum near one (stored run: median 0.2, worst 0.8); the matmul above the blocked sums'
# and below the one-at-a-time sum's (stored: median 5.1, worst 17.6, against 31.5 and 124.0)
_rs, _mm = blocked["tf.reduce_sum"], blocked["tf.matmul"]
assert _rs.shape == _mm.shape == (20,) and np.median(_rs) < 1 and _rs.max() < 2, _rs
assert np.median(_mm) < _med[10**5] and _mm.max() < grow[10**5][0].max(), (_mm, _med)
assert np.median(_mm) > np.median(pairwise) and np.median(_mm) > np.median(_rs), (_mm, pairwise, _rs)
# the figure (r212's reader: "a log-log plot, not a table") draws these: the one-at-a-time medians against the
# sqrt(terms) guide and the worst case, and the blocked sums (squares) at 10^5
assert list(blocked) == ["np.sum (pairwise)", "tf.reduce_sum", "tf.matmul"] and blocked["tf.matmul"] is _mm
assert all(w > 10 * _med[n] for n, (_, w) in grow.items())  # far below the worst case

# Over many updates: an MLP like 10's (784-32-10, ReLU, no biases) in numpy float32, SGD at 0.1 on 64 digits an
# update, in order (rows 64(k-1) to 64k mod 4,000: from update 63 the 4,000 come round again; r222), as one batch and as 4 micro-batches of 16 averaged. "The gap grows slowly: after 100 updates the weights
# stay a few spacings apart (2.0 on the stored run; r2-f4d's, 2.5 before) (the table) ... ten spacings is a fair reading of a run of a
# hundred updates" (the Summary: "measured ... on 100 updates of an MLP"). numpy's matmuls follow the BLAS, so the
# table is nbval-ignored and banded here; on this machine it reads 1.0, 1.0, 2.0, 2.0, 2.5 (weights) and 0, 0, 0, 1, 0
# (losses), pinned where those digits recur
assert list(trajectory) == [1, 3, 10, 30, 100] and Xd.shape == (4000, 784) and len(orders) == 2
assert all(w.dtype == np.float32 for ws in W.values() for w in ws) and [w.shape for w in W0] == [(784, 32), (32, 10)]
_tw, _tl = [trajectory[k][0] for k in trajectory], [trajectory[k][1] for k in trajectory]
assert all(t < 10 for t in _tw) and _tw[-1] >= _tw[0] > 0, _tw  # within ten over 100 updates; grown, not shrunk
assert max(_tl) <= 2 and f"{max(_tl):.0f}" in ("0", "1", "2"), _tl  # "the losses within about one"
assert _tw[-1] < 5 and losses[0] < 1.0 < 2.0 < loss_grads(W0, np.arange(4000))[0], (_tw, losses)  # "a few"; it trains
if [f"{t:.1f}" for t in _tw] == ["1.0", "1.0", "2.0", "2.0", "2.5"]:
    assert [f"{t:.1f}" for t in _tl] == ["0.0", "0.0", "0.0", "1.0", "0.0"], _tl

# The miss is 01's, whose number 01 states and pins; 22 states none of 01's (its toy is a linear least-squares fit)
# "the weighted miss falls about as many orders of magnitude as float64 is finer (2^29: 8.7; the last line prints the
# fall): rounding": OpenBLAS picks its kernel by CPU, so the fall is printed, not written, and banded here (8.6 where
# the stored digits recur; r222: the prose states "8.6 ... on the stored run"; r2-f4d's run read 8.4, stated so); "the plain mean's stays 53.9%"
assert all(u[k].dtype == d for u, d in ((u32, np.float32), (u64, np.float64)) for k in u)
assert missed["weighted", 32] == miss(u32["weighted"], u32["large batch"]) and miss is gl.lessons.miss
# ""Not exact" only screens: the float64 rerun settles it"; "The cancelling sum above read "not exact ...
# (rerun in float64)"; rerun so, it reads exact": the same 1,000 terms one
# at a time in float64, against their exactly rounded sum (math.fsum)
assert verdict(total, exact_c).endswith("(rerun in float64)") and total64 == float(total64)
assert verdict(total64, math.fsum(terms.astype(np.float64))).startswith("exact"), verdict(total64, exact_c)
# c15: "Rerun so, the cancelling sum above is off by 0.0 float64 spacings (next cell)": the cell prints the float64 sum's
# gap both in float32's spacings (verdict) and in float64's own
assert exact64 == math.fsum(terms.astype(np.float64)) and f"{abs(total64 - exact64) / np.spacing(exact64):.1f}" == "0.0"
assert 0 < missed["weighted", 32] < 1e-7 and 1e7 < missed["weighted", 32] / missed["weighted", 64] < 1e10
# a miss too small for % is printed in float32's eps by as_miss (README's Two yardsticks, whose home is here); "in
# float32 `verdict` finds the weighted update exact" (and its miss a few eps: rounding-sized)
assert as_miss(missed["plain mean", 32]) == "53.9%" and as_miss(missed["weighted", 32]).endswith(" eps")
assert missed["weighted", 32] / eps < 5  # a few eps (README): rounding-sized
assert missed["weighted", 64] < eps64 * 5 and verdict(u32["weighted"], u32["large batch"]).startswith("exact")
if (as_miss(missed["weighted", 32]), f'{missed["weighted", 64] / eps64:.2f}') == ("0.6 eps", "0.76"):
    assert missed["weighted", 32] / eps < 1 and missed["weighted", 64] < eps64
    assert f"{fell:.1f}" == "8.6"
# the Summary's "in float64 the weighted miss fell about 2^29-fold": 7 to 10 orders (2^29 is 8.7)
assert 7 < fell < 10 and fell == np.log10(missed["weighted", 32] / missed["weighted", 64])
# "about as many orders of magnitude as float64 is finer (2^29, 8.7)": float32's eps over float64's
assert np.finfo(np.float32).eps / np.finfo(np.float64).eps == 2.0**29 and f"{np.log10(2.0**29):.1f}" == "8.7"
assert eps64 == 2.0**-52
assert as_miss(missed["plain mean", 64]) == as_miss(missed["plain mean", 32]) == "53.9%"
# Memory: "Its API page says it "only supports GPU and TPU" and raises on a CPU; TensorFlow 2.21 does not" (the readings
# above ran reset_memory_stats and get_memory_info on "CPU:0" without an exception, with BFC and with the default)
import tensorflow as _tf
assert _tf.__version__.startswith("2.21.") and len(bfc) == len(default) == len(grown) == 4
# h22: c17 quotes both API pages (TensorFlow 2.21's docstrings): "Currently only supports GPU and TPU. If called on a
# CPU device, an exception will be raised." The lesson calls both on "CPU:0" anyway (undocumented; it does not raise)
_quote = "Currently only supports GPU and TPU. If called on a CPU device, an exception will be raised."
for _f in (_tf.config.experimental.get_memory_info, _tf.config.experimental.reset_memory_stats):
    assert _quote in " ".join(_f.__doc__.split()), _f.__name__
# the verdict table's third row, "miss 53.9%" (its first two: "exact: 4.0 spacings" and "not exact: 16 ...", above)
assert verdict(u32["plain mean"], u32["large batch"]) == "miss 53.9%"
# the same row: "(under 0.01%, in `eps`)": e.g. 350 eps is 0.004%, past RERUN
assert _beyond(20, 350 * eps) == "miss 350.0 eps" and 350 * eps < 1e-4 and 350 >= _rerun
assert _beyond(20, 1e-4) == "miss 0.01%"
# "In Keras, set keras.config.set_dtype_policy("float64") before building the model: 21 reruns so" (21's checks pin
# its rerun); this lesson's models stay float32
assert keras.config.dtype_policy().name == "float32"

# Memory: a fresh process's readings, with BFC and with the default allocator
assert bfc == [(65_536, 65_536), (1_000_000, 1_000_192), (1_048_576, 2_096_896), (6_291_456, 8_388_608)], bfc
assert default == [(65_536, 0), (1_000_000, 1_000_192), (1_048_576, 1_048_576), (6_291_456, 8_388_608)], default
# k6: c19 "the 6 MiB one a whole 8 MiB chunk"; "Grown first by one 1 GiB tensor, as call_peaks does, ... the 6 MiB tensor
# reads exactly 6,291,456 bytes. The 1 MiB tensor still reads 2,096,896: the smallest free chunk that fits, just under
# 2 MiB, is still there"; the rule: "then a request reads its rounded size, or one whole free chunk under twice it"
assert grown == [(65_536, 65_536), (1_000_000, 1_000_192), (1_048_576, 2_096_896), (6_291_456, 6_291_456)], grown
assert 6 * 2**20 == 6_291_456 and 8_388_608 == 8 * 2**20 and 8 * 2**20 < 2 * 6 * 2**20  # whole, not split
assert 2**28 * 4 == 2**30 and grown[2][1] == bfc[2][1] < 2 * grown[2][0]
assert all(g == a or a < g < 2 * a for a, g in grown)  # its size (rounded to 256 bytes), or a whole chunk under twice it
import inspect as _inspect
assert "reserve_bytes=2**30" in _inspect.getsource(gl.lessons.call_peaks)  # call_peaks' guard: 1 GiB, as the probe's
assert 3907 * 256 == 1_000_192 and 1_000_000 / 256 > 3906
assert f"{2_096_896 / 1_048_576:.1f}" == "2.0" and 2_096_896 < 2 * 1_048_576  # just under twice: not split
# "a whole free chunk 256 bytes under 2 MiB ... The default's BFC holds no small tensors, so its free chunk was its first
# region, exactly 2 MiB: twice the request, split, read 1 MiB": mkl_cpu_allocator.h sends requests of
# kSmallAllocationsThreshold = 262,144 bytes (256 KiB) and up to a BFCAllocator with allow_growth, whose first region is
# 2 MiB (bfc_allocator.cc, "2MiB smallest initial allocation"); smaller ones to MklSmallSizeAllocator, which counts
# nothing by default (the 0 above). 2 MiB is exactly twice 1 MiB, so FindChunkPtr splits it
assert 2 * 2**20 - bfc[2][1] == 256 and 2 * 2**20 >= 2 * default[2][0] and default[2][1] == default[2][0]
assert bfc[0][0] < 262_144 <= bfc[1][0] and default[0][1] == 0 and default[1][1] == bfc[1][1]
# r4: "The default reads 1,000,000 bytes as BFC does and 1 MiB exactly: from 256 KiB oneDNN sends requests to a second
# BFC allocator, which counts; here its free chunk split" (mkl_cpu_allocator.h: kSmallAllocationsThreshold, 262,144)
assert default[1][1] == 1_000_192 and default[2] == (1_048_576, 1_048_576) and bfc[2][1] > 2 * 1_048_576 - 512

# Time: "Both timers read about 4: four sorts do four times one sort's work" (r213: a ratio the
# work fixes, in place of np.sort of 2^18 against 2^16, whose 4.50x from length x log length the runs missed, reading
# about 5.0x, by a cause this lesson did not measure). History of that example: (r210's reader: the heading "Near"
# beside a stored 5.0x and "above"; no side pinned, it varies by machine)
# (r208's readers: the stored run printed 5.01 and 5.02, middle half 4.94-5.07, "above", where the prose said "as
# counted"; no digits pinned; the stored line says "above". r207 cut the earlier mechanism, "the sort finishes short
# pieces at a fixed cost": r205 timed np.sort from 2^11 to 2^20 and saw an even step a doubling, r207's busy-machine
# probe a jump between 2^16 and 2^18, so neither cause is measured) (r184's stored
# run: 4.92 and 4.91; r186's 4.97 and 4.96; r196's 4.92 and 4.94; r171's read 4.04; a reader's 4.07). The medians
# are run-varying (nbval-ignored; a reader's 2-core run read 4.07), so no digits: a band for a slower, faster or busy machine
# your timer (or the solution): the same rotating call order as gradlab's interleaved_ms (4 rounds, the warm-up first)
assert timer in (my_interleaved_ms, solution_interleaved_ms)
assert calls["yours"] == calls["gradlab's"] == list("abc" "bca" "cab" "abc"), calls
# "Over fewer, as in 05 and 19 (12 rounds), a median is only a lead: for alike settings the middle half
# still misses 1 up to 15% of the time over 12 (the bound below; over nine it would be 1 - 0.82 = 18%); drawn, about one time in
# ten (next cell)"; "The bound": "np.percentile interpolates, so the middle half
# of 12 ratios spans at least the 4th to 9th sorted ones. Those hold the true median with probability
# P(4 <= K <= 8) = 0.85 ... it misses less often than 15%". np.percentile's 25th and 75th of n lie at positions
# 0.25 (n - 1) and 0.75 (n - 1), from 0: for 12, 2.75 and 8.25, between the 3rd and 4th and the 9th and 10th (1-based).
# (r219: the prose said "wrong about 15% of the time", but 15% is only the bound: a reader marked it wrong)
from math import comb
_cover = lambda n, lo, hi: sum(comb(n, b) for b in range(lo, hi)) / 2**n  # P(lo <= #ratios under the median < hi)
assert 2 < 0.25 * 11 < 3 and 8 < 0.75 * 11 < 9 and f"{_cover(12, 4, 9):.2f}" == "0.85"
assert f"{1 - _cover(12, 4, 9):.0%}" == "15%" and f"{wrong[12][1]:.0%}" == "15%"
# h22c (r24: printed bounds to one decimal, no rounding down): c26 "up to 14.6% of the time", c27 "at most 14.6%"
assert f"{wrong[12][1]:.1%}" == "14.6%"
assert wrong[12][1] == 1 - _cover(12, 4, 9)  # the cell's bound is the prose's
# Problem 3: "over 8, alike settings miss 1 up to 29% of the time, 1 - P(3 <= K <= 5) (the 3rd to 6th sorted ratios)":
# at 8, np.percentile's 25th and 75th lie at 1.75 and 5.25 (from 0), so the middle half spans at least the 3rd to 6th
assert 1 < 0.25 * 7 < 2 and 5 < 0.75 * 7 < 6 and f"{1 - _cover(8, 3, 6):.0%}" == "29%"
assert (math.ceil(0.25 * 7) + 1, math.floor(0.75 * 7) + 1) == (3, 6)  # c27's a and b at n = 8
# the Rule's "over 20 rounds or more": the bound there is 4% (the 6th to 15th, 96%), over 30 rounds 2% (9th to 22nd)
assert (wrong[20][1], wrong[30][1]) == (1 - _cover(20, 6, 15), 1 - _cover(30, 9, 22))
assert f"{wrong[20][1]:.1%}" == "4.1%" and f"{wrong[30][1]:.1%}" == "1.6%"  # h22c: printed .1% (was 4% and 2%)
# a bound, not the rate: drawn (the next cell, seeded: 20,000 draws of n ratios 1 + 0.1 N(0, 1), symmetric about 1),
# the middle half misses 1 less often than the bound at each n, and at 12 rounds "about one time in ten" (stored run
# 9.5%; r219 checked by hand that normal, lognormal and uniform spreads all read 9.5 to 9.6% at 12, 2.6 to 2.7% at 20)
assert f"{_cover(9, 3, 7):.2f}" == "0.82" and f"{1 - _cover(9, 3, 7):.0%}" == "18%"  # over nine: the 3rd to 7th
assert list(wrong) == [12, 20, 30] and all(w < bound for w, bound in wrong.values()), wrong
assert 0.07 < wrong[12][0] < 0.12, wrong  # about one time in ten
assert wrong[20][0] < 0.04 and wrong[30][0] < wrong[20][0] < wrong[12][0], wrong  # surer with more rounds
# the Summary's "over 12, a lead, wrong about one time in ten"
assert f"{wrong[12][0]:.0%}" in ("9%", "10%", "11%")
# "about 4": each median in a band no busy machine breaks, yet far from a ratio the work did not fix (2 or 8)
assert list(sorts) == ["one sort", "four sorts"] and small.shape == (2**16,) and small.dtype == np.float32
assert q == quartiles["gradlab's"] and all(3.0 < r[1] < 5.5 for r in quartiles.values()), quartiles
assert abs(np.median(ms["four sorts"] / ms["one sort"]) - q[1]) < 1e-12
# "their middle halves nearly coincide (3.99-4.14x and 3.99-4.12x on the stored run)" (r6; r2-f4d read 3.98-4.03x, 3.99-4.04x) (r2-f4d; r222 read 3.97-6.22x, 3.94-4.03x;
# run-varying, nbval-ignored): solution_interleaved_ms and interleaved_ms call and time alike (the order asserted above)
assert all(q_[0] <= q_[1] <= q_[2] for q_ in quartiles.values()), quartiles
# "In blocks the ratio of medians rises (7.98x on the stored run; r2-f4d read 10.65x, r222 8.43x): every four-sort call ran slow and no one-sort
# call did. The slowdown alone gives 4 x 2 = 8x; the blocks' real speeds differed too" (the stored run's). Interleaved, the within-round ratio stays near the unslowed one (4.00x)": the blocks' four-sort calls all ran slow, the interleaved
# rounds' last 15 both
# h22x (r25 22-F4): the constructed demo is replaced by real load (os.cpu_count() spinning processes) on the second
# half: blocks time one sort quiet and four sorts loaded; interleaved runs 15 quiet rounds, then 15 loaded. Probes
# here (2 cores) read blocks 16.6-17.2x (minimums 11-16x), interleaved quiet ~4.0x, all 30 4.8-4.9x: banded
assert [len(t) for t in (*blocks.values(), *halves["quiet"].values(), *halves["loaded"].values())] == [15] * 6
_all30 = np.median(np.concatenate(list(within.values())))
assert 3.0 < np.median(within["quiet"]) < 5.5 and 3.0 < _all30 < 7.0 and drift["medians"] > 1.5 * _all30, (drift, within)
# c32 "Interleaved, the within-round ratio stays near the quiet one": interleaving removed most of the blocks' drift
_quiet, _loaded = (np.median(within[h]) for h in ("quiet", "loaded"))
assert abs(_loaded - _quiet) < (drift["medians"] - _quiet) / 2, (within, drift)
assert drift["minimums"] > 0, drift  # c32 quotes the ratio of minimums as read (4.44x and 4.09x in two runs here; probes 11-16x): no band
# the learner's peak reader (or the solution; its checker ran in its cell), read nine times on one Keras update of a
# 784-32-10 MLP: "In one process, readings of one update agree closely: their spread is under a tenth of their
# median, far below a whole chunk's 2.0 times" (the spread printed); the Summary's "under a tenth apart" (r208's readers: the prose's
# "a few percent, runs here 1.3% to 5.3%" beside a stored 0.1%). The digits vary run to run (nbval-ignored; r199's
# runs read 0.17 to 0.18 MiB, a spread of 5.3%, on a machine others were loading, and 0.363 to 0.368, 1.3%; r207's
# 0.1%): pinned under a tenth, about twice the worst seen
assert peak_of in (my_call_peak, solution_call_peak)
assert reads.shape == (9,) and reads.min() > 0 and spread == (reads.max() - reads.min()) / np.median(reads), reads
# (CI, stop 83, two nbval workers: 0.166 to 0.183 MiB, two allocator clusters 16 KiB apart, 10.2%): the prose states
# only the stored run's spread, so the band asks under a quarter, still far below a whole chunk's doubling
assert spread < 0.25 and reads.max() < 1.5 * reads.min() and bfc[2][1] / bfc[2][0] > 1.9, (reads, spread)
# (r217: the third line, "the gradients, 0.10 MiB ... a tensor copy of the batch, 0.19 MiB ... only when Keras makes
# one", is cut: its parts did not add to the median and the prose never used them; the spread is the section's point)
assert net.count_params() == 25_450 and Xd.dtype == np.float32 and reads.min() > 4 * net.count_params() / 2**20, reads
# "Across fresh processes a larger update's reading moves by a few MiB, as 12 finds for 11's plain update": 12's
# prose states it (r212's course reader: 26.54 MiB added in 11, 23.50 in 12, about 27.7 in 23); not measured here
# (r222: cut from the prose, which had no number behind it here). The prose now states the stored spread, "to 1.4% on
# the stored run (0.359 to 0.364 MiB)" (Summary: "1.4% apart on the stored run"; r2-f4d read 4.3%): run-varying, so banded above

# Problems
s03 = float(np.spacing(np.float32(0.3)))
assert s03 == 2.0**-25 and f"{s03:.1e}" == "3.0e-08" and round(5.1e-7 / s03) == 17 and 5.1e-7 / s03 > 10
# "they differ by at most 3.0e-08": a possible gap there, a whole number of spacings (Problem 1 before r172 said
# 2.0e-08, which no two float32 numbers in [0.25, 0.5) can be apart)
assert f"{1 * s03:.1e}" == "3.0e-08" and f"{17 * s03:.1e}" == "5.1e-07"
# Memory's rule, and Problem 2: "it splits a free chunk only if the chunk holds at least twice the rounded request or
# leaves at least 128 MiB over; otherwise the call gets the whole chunk" (bfc_allocator.cc, FindChunkPtr; 128 MiB is
# its default kMaxInternalFragmentation). 3 MiB from a 5 MiB chunk: whole, reads 5; from 7 MiB: split, reads 3. "The
# 1 MiB tensor got a whole free chunk just under 2 MiB: it read 2.0 times its size" (Memory's table, its last row)
_MiB = 2**20
_bfc_reads = lambda ask, chunk: chunk if not (chunk >= 2 * ask or chunk - ask >= 128 * _MiB) else ask  # noqa: E731
assert 3 * _MiB % 256 == 0 and _bfc_reads(3 * _MiB, 5 * _MiB) == 5 * _MiB and _bfc_reads(3 * _MiB, 7 * _MiB) == 3 * _MiB
assert bfc[2] == (_MiB, 2_096_896) and _bfc_reads(_MiB, 2_096_896) == 2_096_896 and 2_096_896 < 2 * _MiB

# r6: verdict prints "bit for bit" only for a zero gap (c10's table's first row); the float64 rerun of the cancelling sum
# is one ("equals its exactly rounded sum bit for bit"), in float32's spacings and in float64's own
assert verdict(np.ones(3, np.float32), np.ones(3, np.float32)) == "exact: 0 spacings, bit for bit"
assert verdict(total64, exact64) == "exact: 0 spacings, bit for bit" and total64 == exact64
assert as_spacings(abs(total64 - exact64) / np.spacing(exact64)) == "0 spacings, bit for bit"
# c13: "Spacings are counted at the largest weight: a one-step gap at a smaller entry reads as 0.5"
assert spacings(np.float32([1.5, 0.75 + 2**-24]), np.float32([1.5, 0.75])) == 0.5
# c18's first line: the TensorFlow whose CPU reset_memory_stats does not raise, and oneDNN, whose allocator reads 0 under 256 KiB
from tensorflow.python.util import _pywrap_util_port  # r8: the lesson no longer imports it; its footnote says "oneDNN"
assert default[0][1] == 0 and _pywrap_util_port.IsMklEnabled()
# c22: gradlab's call_peaks beside the learner's reader: the same update, medians within the readings' own spread
assert abs(theirs - np.median(reads)) < 0.096, (theirs, reads)  # h22x: call_peaks now reads it beside the parts

# r4: the Rule "wrongly at most 4% of the time for alike settings (next cell: 3.0%): in effect a sign test needing about
# 15 of 20 ratios on one side": over 20 the middle half spans at least the 6th to 15th sorted ratios, so it misses 1
# only when 15 or more fall on one side
assert f"{wrong[20][0]:.1%}" == "3.0%" and f"{wrong[20][1]:.1%}" == "4.1%"  # h22c: "at most 4.1%" (4.14%: r24)
assert (math.ceil(0.25 * 19) + 1, math.floor(0.75 * 19) + 1) == (6, 15)
# k6: c10 "The sum's 16.1 spacings are a relative gap of 1.37e-06: 11.5 eps (third line)"; eps as the relative gap
# ||a - b|| / ||b|| in units of 2^-23, spacings as the worst entry's gap over one spacing at the largest entry
assert f"{miss(total, exact_c):.2e}" == "1.37e-06" and f"{miss(total, exact_c) / eps:.1f}" == "11.5"
assert abs(miss(total, exact_c) - abs(float(total) - exact_c) / abs(exact_c)) < 1e-15

# r8 (22-F2): cell 5 prints the tenfold steps 2.66, 2.14, 2.84 (all under sqrt(10) = 3.16)
assert [f"{b / a:.2f}" for a, b in zip(med, med[1:])] == ["2.66", "2.14", "2.84"], med
# h22b (r22-02-22): c6 "its typical size grows as sqrt(terms) (dashed, fitted), an average, not a bound. Modelled (each
# addition rounding evenly within half a spacing), the walk's median reads 1.3, 4.6, 10.6, 40.7, slope 0.48. These 20
# grow a little slower, slope 0.40: a median of 20 is noisy (1.9 against 1.3 at 100 terms). (i22: now "Both grow least from 10^3 to 10^4", where
# the sums sit just past 4,096 and the spacing has just doubled." The model: running totals k/2, each rounding uniform
# in +-half a spacing (variance s^2/12), summed as a random walk, in spacings at the sum; the median of |N(0, sd)| is
# 0.674 sd. All deterministic (seeded numpy, float32 cumsum in order), so pinned
assert list(counts) == list(grow) and [f"{w:.1f}" for w in walk] == ["1.3", "4.6", "10.6", "40.7"], walk
assert (f"{slopes[0]:.2f}", f"{slopes[1]:.2f}") == ("0.40", "0.48"), slopes
assert abs(slopes[0] - np.polyfit(np.log10(list(grow)), np.log10(med), 1)[0]) < 1e-9 and slopes[0] < slopes[1] < 0.5
assert (f"{med[0]:.1f}", f"{walk[0]:.1f}") == ("1.9", "1.3") and med[-1] < walk[-1]  # noisy both ways
assert f"{np.sqrt(10):.2f}" == "3.16" and all(b / a < np.sqrt(10) for a, b in zip(med, med[1:]))
_dip = lambda m: m[2] / m[1] < min(m[1] / m[0], m[3] / m[2])  # the 10^3 -> 10^4 step is the smallest  # noqa: E731
assert _dip(med) and _dip(walk), (med, walk)
assert np.all((4096 < exact5[:, 10**4 - 1]) & (exact5[:, 10**4 - 1] < 1.25 * 4096)), exact5[:, 10**4 - 1]  # just past
assert np.spacing(np.float32(4097)) == 2 * np.spacing(np.float32(4095))  # the spacing doubles at 4,096
# the figure's slope guide (gradlab's guide="fit"): sqrt(terms), through the four medians in log space, recomputed
# here from the cell's medians; gradlab's figure is otherwise as tested beside it
_guide = [g for g in fig.axes[0].lines if g.get_gid() == "sqrt"]
assert len(_guide) == 1 and np.allclose(_guide[0].get_ydata(), np.exp(np.mean(np.log(med) - np.log(counts) / 2)) * np.sqrt(counts))
assert "fitted" in _guide[0].get_label() and fig.axes[0].get_legend() is not None
# r8 (22-F3): c10 "A doubled bias gradient, a millionth of the kernel's size, reads exact over all variables and
# miss 100% alone"
assert verdict(buggy, right).startswith("exact") and verdict(buggy[1], right[1]) == "miss 100%"
assert verdict(buggy[0], right[0]).startswith("exact") and 0.5e-6 < np.std(bias) / np.std(kernel) < 2e-6  # entries' scale
# r8 (22-F1): c15 "every term and every running total is a whole multiple of the smallest term's spacing, here 2^-34.
# The running totals stay under 2^5 ... 39 bits here, fits float64's 53"; "2^30 + 2^-30 (61 bits) rounds to 2^30"
assert (finest, ceiling, ceiling - finest) == (-34, 5, 39) and np.abs(terms).max() < 2**ceiling
assert np.all(np.mod(terms.astype(np.float64), 2.0**finest) == 0) and np.finfo(np.float64).nmant + 1 == 53
assert total64 == exact64 and 2.0**30 + 2.0**-30 == 2.0**30 and 30 - (-30) + 1 == 61
# r8 (22-F4): c23 "0.097 MiB of gradients plus 0.021 of outputs and their gradients is 0.118; the update reads 0.17
# (nine readings within a few percent). The other 0.05 MiB ... the forward pass alone reads about twice its outputs'
# 0.010 MiB ... 0.191 MiB more"; the Summary's "read 0.17". The readings vary a little run to run (nbval-ignored;
# executions here read medians 0.169 and 0.170, spreads 0.7% to 2.7%, the forward 0.019 and 0.021): banded
assert (f"{grads_mib:.3f}", f"{outs_mib:.3f}", f"{grads_mib + outs_mib:.3f}") == ("0.097", "0.021", "0.118")
assert f"{outs_mib / 2:.3f}" == "0.010" and f"{64 * 784 * 4 / 2**20:.3f}" == "0.191" == f"{Xd[:64].nbytes / 2**20:.3f}" and device in ("CPU:0", "GPU:0")
if device == "CPU:0":
    # "reads 0.17 on the stored run": a run under load (two lessons at once, as `make test` runs them) read 0.18
    # "within a few percent" is the stored run's (printed, 2.7%); under load the spread reached 9.3% and 10.2%, so
    # only the quarter band above holds it here
    assert 0.15 < np.median(reads) < 0.20, (reads, spread)
    # h22b (r22-02-22: "the rest is temporaries" was unmeasured): c23 "On the stored run this process read 0.168, a fresh
    # process 0.183, and a fresh process holding zeros like the weights 0.107: under the budget, so not every counted
    # tensor lives at once. Same bytes asked; the allocator's free chunks decide what each request gets (a whole chunk,
    # up to 2x it: the 0.183 - 0.107 gap is under the first layer's 0.096 MiB kernel gradient)". h22b's probes in fresh processes:
    # the update 0.164 to 0.183 holding nothing, 0.106 to 0.108 once zeros like the weights were held (0.118 after c5's
    # TensorFlow sums); a tape's gradients alone 0.177 (returned), SGD's apply alone 0.0957 (one kernel-sized
    # temporary, lr * grad); the forward pass and loss 0.0107. Banded (nbval-ignored)
    _nothing, _zeros = fresh.values()
    assert list(fresh) == ["nothing", "zeros like the weights"], fresh
    assert 0.08 < _zeros < 0.20 and 0.08 < _nothing < 0.20, fresh  # h22x: h22c's order (zeros < 0.118 < nothing) no longer claimed
    # h22c's stored run: 0.168 here, 0.171 fresh, 0.107 holding zeros (0.171 - 0.107 = 0.064 < 0.096); c23 now says
    # plainly which request got a whole chunk is not measured (a bfc_allocator VLOG probe was tried and abandoned)
    assert f"{net.weights[0].numpy().nbytes / 2**20:.3f}" == "0.096" and net.weights[0].shape == (784, 32)
    # h22c: the forward pass's reading (0.017 against its outputs' 0.010, unexplained in prose) is no longer printed
    # h22c: c23's numpy-rows line ("0.190 MiB more ... not every run sees it", unquantified: r24) is cut, with its code
# h22c (r24 22-1): c18 prints the "after 1 GiB" (grown) and "BFC off" (default) columns; c19 "BFC ... may hand over a
# whole free chunk under twice its size (table above): 6 MiB got 8. So call_peaks and 11 first make and free 1 GiB: a
# free chunk BFC cuts to size for any request under 512 MiB (after it, 6 MiB reads 6; 1 MiB still finds a smaller
# chunk). With BFC off, requests under 256 KiB go uncounted: 64 KiB reads 0."
assert bfc[3] == (6 * 2**20, 8 * 2**20) and grown[3] == (6 * 2**20, 6 * 2**20)  # 6 got 8; after 1 GiB, 6 reads 6
assert 2 * 512 * 2**20 == 2**30 and grown[2][0] < grown[2][1] < 2 * grown[2][0]  # split rule's "twice"; 1 MiB whole
assert default[0] == (65_536, 0) and 65_536 < 256 * 2**10 <= default[1][0] and default[1][1] > 0  # under 256 KiB: 0
# h22d (r25 22-F2): c6 "TF32: on NVIDIA Ampere and newer GPUs, TensorFlow by default rounds float32 matmul and
# convolution inputs from 23 bits to 10 (enable_tensor_float_32_execution's API page): far past ten spacings.
# `import gradlab.lessons` turns that off": float32 keeps 23 stored bits; 10 bits' spacing is 2^13 times float32's
assert np.finfo(np.float32).nmant == 23 and 2.0 ** (23 - 10) > 100 * ROUNDING
assert not tf.config.experimental.tensor_float_32_execution_enabled()  # gradlab.lessons turned it off at import
# the off switch lives in gradlab/lessons.py, once (the prose no longer quotes its line)
import gradlab.lessons as _lessons_module
_tf32_off = [line for line in open(_lessons_module.__file__).read().splitlines()
             if line.endswith("enable_tensor_float_32_execution(False)")]
assert len(_tf32_off) == 1, _tf32_off
# h22d (r25 22-F1): c23 "Tolerance: with one history, nine readings spread 0.6% on the stored run. Across histories,
# up to 0.171 - 0.107 MiB: under the largest tensor (0.096 MiB, a kernel gradient). So, same history, a reading within
# one largest tensor of the budget is consistent: all three are." (0.6%, 0.168/0.171/0.107 stored, nbval-ignored;
# banded above: spread < 0.25, the fresh gap under the kernel's 0.096). Largest tensor: the first kernel's
_largest = max(w.numpy().nbytes for w in net.weights) / 2**20
assert _largest == net.weights[0].numpy().nbytes / 2**20 and f"{_largest:.3f}" == "0.096"
# i22 (r32 22-2.4/5.1/1.3): c25 "Yet the whole update read 0.106, no more than the tape alone: its eta g never appears.
# TensorFlow writes a product into an input's buffer when nothing else uses that input: eta g on a kernel-sized g read
# 0.096, one tensor; with g also returned, 0.191, two ... What must coexist sets a floor: the first kernel's gradient
# and the 64 x 32 output gradient it is made from, 0.104 MiB. Rule: a least reading between floor and budget is
# consistent". Probe here (fresh process, least of five): g made and scaled in the call 0.0957, held from Python
# 0.0957 (the product alone), g also returned 0.1914; a constant g (tf.fill) is folded away and reads 0
_floor_bytes = net.weights[0].numpy().nbytes + 4 * 64 * net.layers[0].units  # kernel gradient + dh, both float32
assert abs(floor - _floor_bytes / 2**20) < 1e-12 and f"{floor:.3f}" == "0.104" and floor < budget
assert f"{np.abs(terms.astype(np.float64)).sum() / abs(exact_c):.0f}" == "143"  # c12 "condition number ... 143 here"
assert round(np.median(exact5[:, 10**4 - 1]), -3) == 5000 > 4096 and f"{med[2] / med[1]:.2f}" == "2.14"  # c6
if device == "CPU:0":  # the stored run's readings (a GPU's allocator reads differently; not measured here)
    _all_reads = [*reads, *warm, *holding, *fresh.values(), theirs]
    assert all(floor <= r <= budget for r in _all_reads), (_all_reads, floor, budget)  # the rule: all consistent
    # c25 "Read alone, each part is near its count (stored run): the tape's gradients 0.115 MiB (counted 0.118);
    # SGD's apply 0.096, one eta g the first kernel's size". Least of nine (statistic="min", as the prose says)
    _parts = list(part_mib.values())
    assert list(part_mib) == ["forward and loss", "tape's gradients", "SGD's apply", "whole update",
                              "lr * g, g used once", "g also returned", "bug: 4 micro-batches' gradients kept"], part_mib
    # j22 (r35 22-1a/3): the bug keeps four gradient sets alive at once: at least 4 x 0.097 MiB, twice the budget
    _bug = part_mib["bug: 4 micro-batches' gradients kept"]
    assert _bug >= 4 * grads_mib - 1e-9 and 4 * grads_mib > 2 * budget > budget, (_bug, budget)
    # c25 "the tape's gradients take 0.115 MiB, near their count, 0.097 + 0.021 ... the whole update read 0.106, no more than
    # the tape alone" (i22's stored run 0.115 and 0.106; its first run read the tape 0.105, whole 0.106; h22x's
    # medians 0.115 and 0.106; band: 0.005 over the tape). The tape holds every gradient at its end and the kernel's with dh: floor to the full count
    assert 0.005 < _parts[0] < 0.03 and floor <= _parts[1] < grads_mib + outs_mib + 0.01, part_mib  # near 0.118
    assert abs(_parts[2] - temp_mib) < 0.005 and theirs <= _parts[1] + 0.005, part_mib  # "no more than the tape"
    assert abs(_parts[4] - temp_mib) < 0.005 and abs(_parts[5] - 2 * temp_mib) < 0.01, part_mib  # forwarded: one, two
    assert least == min(*reads, *warm, *holding, *fresh.values(), theirs) and least < 0.12, (least, floor)
assert (f"{budget:.3f}", f"{temp_mib:.3f}") == ("0.193", "0.096") and temp_mib == _largest and f"{2 * temp_mib:.3f}" == "0.191"
print("lesson 22: every number the prose states checks out")
