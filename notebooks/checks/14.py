"""The authors' checks of lesson 14 (14-memory.ipynb), not part of the lesson.

Run by the lesson's last cell with `%run -i`, over the notebook's names: it re-checks every number
the prose states, exactly where the number is fixed and as a conclusion that outlasts the run-to-run
spread where it is a memory or time reading (nbval cannot pin those)."""
import numpy as np

# the budget (cell 3) and the levers' budgets against the measured medians
assert round(1024 * t / MiB, 2) == 4.50, t
assert (a_out, t) == (18_984, 4_608) and round(f, 3) == 0.137 and a_seg == 4_096, (a_out, t, f, a_seg)  # a_out and t: the widths' sums
assert solution_row_bytes([784, 1024, 10]) == (4 * 1034, 4 * 1034)  # no gradient for the data: t is not 4 (784 + 1024)
check_budget(budget)  # the lesson's budget: gradlab's memory_budget to the byte, over six settings
assert 0 < budget(1024, 1, True) - budget(1024, 4, False) < 1024 * 1024 * 4  # nearly tie: under one output
assert [round(budget(**lever) / MiB, 2) for lever in levers.values()] == [34.91, 22.91, 22.04, 19.04]
assert [round(budget_update[n], 2) for n in ("plain", "tf.recompute_grad", "N=4")] == [27.44, 15.44, 14.57]
assert block_apart == 0.0, block_apart  # four Blocks, keras.remat: exact

# what one update adds, measured (medians of nine)
assert all(0 <= net.held_mib - 4 * P / MiB < 1 for net in nets.values())  # held: the weights and a little state
assert abs(batch_mib - (xb.shape[0] * 4 * 784 + yb.shape[0] * 8) / MiB) < 0.01, batch_mib  # the batch
rc = ("tf.recompute_grad",)
assert all(median[n] < 0.7 * median["plain"] for n in rc + ("N=4",)), median  # each about half of plain's
# (a loaded nbval run read tf.recompute_grad at 0.60 of plain's: the same allocator spread as below)
spread = {n: float(np.ptp(adds[n])) for n in rc + ("N=4",)}  # one setting's nine readings, highest - lowest
# the levers about tie: their medians within a quarter of plain's update of each other (loaded runs read
# 14.78 against 12.97 MiB, and 17.04 against 13.51; quiet runs tie within the spread)
assert all(abs(median[n] - median["N=4"]) < 0.25 * median["plain"] for n in rc), (median, spread)
assert all(abs(whole[n] - whole["N=4"]) < 0.25 * median["plain"] for n in rc), whole  # in all, too
assert all(abs(off_budget[n]) < 5 for n in ("plain", "N=4") + rc), off_budget  # the budget: within a few MiB
assert median["yours"] > 0.8 * median["plain"], median  # yours without a wait saves nothing
# the levers together: under either alone (runs: 10.0-10.3 MiB against 12.0-13.0), their tick under their bar
both = median["N=4 and recompute"]
assert both < min(median[n] for n in rc + ("N=4",)) and both < 0.45 * median["plain"], median
assert whole["N=4 and recompute"] < budget(**levers["N=4 and recompute"]) / MiB + 1, whole
# Keras's own block rebuild (list_of_layers on four named Blocks): about half of plain's, its tick under its bar
assert median["scope on Blocks"] < 0.7 * median["plain"], median  # runs read 0.47 to 0.60
assert whole["scope on Blocks"] < budget(**levers["tf.recompute_grad"]) / MiB + 1, whole
# the figure: the levers' ticks at or under their bars, yours' far above
assert all(whole[n] < budget(**levers[n]) / MiB + 1 for n in rc + ("N=4",)), whole
assert whole["yours"] > budget(**levers["tf.recompute_grad"]) / MiB + 4, whole  # far above (runs: +8.6 to +10.3)

# the traces (when each reached its loss moves between runs: the prose quotes the stored run)
assert all(tr.peak >= tr.mib.max() - 1e-9 for tr in traces.values()) and len(marks["N=4"]) == 4 == 4 * len(marks["plain"])
assert all(0 < m[0] < tr.ms[-1] for m, tr in zip(marks.values(), traces.values())), marks
assert list(traces) == ["plain", "yours", "tf.recompute_grad", "N=4"], list(traces)

# the costs: multiply-adds, products, time
# where to checkpoint: segments of 1, 2, 4 blocks, and N = 4 with one-block segments (budget, extra work)
seg = [segments(k, N) for k, N in ((1, 1), (2, 1), (4, 1), (1, 4))]
assert [round(mib, 2) for mib, _ in seg] == [22.91, 26.41, 34.91, 19.04], seg
assert [round((fwd + bwd + x) / (fwd + bwd), 2) for _, x in seg] == [1.16, 1.23, 1.27, 1.16], seg
assert seg[0][1] == rebuilt and abs(seg[0][0] - budget(**levers["tf.recompute_grad"]) / MiB) < 1e-9  # k = 1: the lesson's
assert abs(seg[2][0] - budget(**levers["plain"]) / MiB) < 1e-9  # one segment of four: plain's memory again
assert round(budget(**levers["N=4"]) / MiB, 2) == 22.04 and seg[3][0] < min(seg[0][0], budget(**levers["N=4"]) / MiB)
assert round((fwd + bwd + rebuilt) / (fwd + bwd), 2) == 1.16 and 4 * (3 * len(macs) - 1) == 116 and 3 * len(macs) - 1 == 29
# recomputation's time: every block's fastest under its 1.16x multiply-adds (runs: blocks 0.94-1.07, loaded or
# quiet); N = 4 the more, and recomputation added to N = 4 more still (runs: 1.07-1.40 for N = 4 as load varies)
sh = {n: float(np.median(s)) for n, s in share.items()}  # the three blocks' median
assert max(share["tf.recompute_grad"]) < 1.16, share
assert sh["N=4 and recompute"] > sh["N=4"] > sh["tf.recompute_grad"] and 4 * sh["plain, 256 rows"] > 1, share

# the MLP's budget near its measured update
assert 0.8 < budget_update["plain"] / median["plain"] < 1.25, median  # near the MLP's update (runs read 0.89 to 1.09)

# yours with a wait: the graph's products, and what one update adds
assert waited_apart < 1e-6, waited_apart  # waiting: the plain tape's gradients
assert count == {"plain": (29, 10, 29), "yours": (37, 18, 33), "yours, waiting": (37, 10, 33),
                 "tf.recompute_grad": (37, 10, 33)}, count
again_m = {n: np.median(m) for n, m in waited_adds.items()}
# the waiting rebuilds save (runs: 0.45-0.50 of plain for yours, 0.46-0.59 for tf.recompute_grad; an early rebuild reads > 0.8)
assert again_m["yours, waiting"] < 0.7 * again_m["plain"] and again_m["tf.recompute_grad"] < 0.7 * again_m["plain"], again_m

# the traces the prose reads: recomputation's peak well under plain's, yours' about plain's
assert traces["tf.recompute_grad"].peak < 0.75 * traces["plain"].peak, {n: tr.peak for n, tr in traces.items()}
assert traces["yours"].peak > 0.8 * traces["plain"].peak, {n: tr.peak for n, tr in traces.items()}
# waiting: yours and tf.recompute_grad tie (their nine readings' ranges overlap)
yw, rw = waited_adds["yours, waiting"], waited_adds["tf.recompute_grad"]
assert min(yw) < max(rw) and min(rw) < max(yw), waited_adds

# the budget's two forms: inside an update it leaves out the weights and batch held before it
assert round(held_before, 2) == 7.47 and round((4 * P + 1024 * a_in) / MiB, 2) == 7.47 and round(budget(**levers["plain"]) / MiB - 7.47, 2) == 27.44

# a quarter of the rows takes more than a quarter of plain's time (the reason N = 4 costs time)
assert sh["plain, 256 rows"] > 0.25, share
# the rebuilt products: two a block, of which each block's Dense(128) feeds no gradient
assert count["yours"][0] - count["plain"][0] == 8 and count["yours"][2] - count["plain"][2] == 4, count

# problem 3 (on paper): a 7B model, float32, Adam, on one H100 80GB (81,559 MiB in all)
assert round(floor) == 104 and round(floor / 8) == 13 and floor > 80e9 / 2**30 and round(81559 / 1024, 1) == 79.6  # GiB: nvidia-smi's 81,559 MiB
assert round(big["total"] / 2**30) == 130 and round(7e9 * (2 + 2 + 12) / 2**30) == 104
