"""Lesson 03's authors' checks: re-check every number the prose states against the names the notebook
has just computed.

Run by the lesson's last code cell (`%run -i checks/03.py`), so nbval fails when a run disagrees
with the text. Not part of the lesson. The gaps the lesson compares with a float32 spacing are
checked against that spacing; every other number is checked as the prose rounds it.
"""
import numpy as np

spacing = lambda v: float(np.spacing(np.float32(v)))


def max_abs_diff(a, b):  # over all variables
    return max(float(np.abs(u - v).max()) for u, v in zip(a, b))


# Digits that hang on the order of float32 additions are pinned as the solutions make them (the stored run); a
# learner's passing functions add in their own order, so theirs are held to 01's yardstick, under ten spacings
HOST = host_step is solution_host_step  # weighted_mean is given in the lesson (01's rule on fetched arrays)


def pinned(solution, got, expected):  # the solution's digits; a learner's are bounded around this call
    assert not solution or got == expected, (got, expected)

eps = float(np.finfo(np.float32).eps)
assert f"{eps:.1e}" == "1.2e-07" and eps == np.spacing(np.float32(1))

# the uneven case, 16 + 16 + 16 + 15; the plain mean's miss is measured on his graph below. The 63's parts, fetched
# here (the lesson cites 02's rule and does not re-prove it): the means below are compared bit for bit, whatever the weights
assert counts63 == [16, 16, 16, 15] and sum(counts63) == 63
parts = [[t.numpy() for t in micro_grads(a, b)[1]] for a, b in zip(xs63, ys63)]
# gradlab's host_average with counts is weighted_mean bit for bit; without counts, the plain mean
assert max_abs_diff(weighted_mean(parts, counts63), host_average(parts, counts=counts63)) == 0
assert max_abs_diff(plain_mean(parts[:3]), host_average(parts[:3])) == 0
# the running sum makes weighted_mean's float32 additions in the same order: bit for bit on the 63's parts
running = None
for n, g in zip(counts63, parts):
    term = [a * np.float32(n) for a in g]
    running = term if running is None else [r + a for r, a in zip(running, term)]
assert max_abs_diff([r / np.float32(63) for r in running], weighted_mean(parts, counts63)) == 0

# your TF2 loop (a passing version of yours, or the solution): gradlab's host_average update bit for bit, and one
# float32 spacing at the largest weight (0.159: 1.5e-08) from one large batch per update, as gradlab's strategy
assert host_step in (my_host_step, solution_host_step)
w_top = max(float(np.abs(w).max()) for w in large_weights)
assert f"{w_top:.3f}" == "0.159" and f"{spacing(w_top):.1e}" == "1.5e-08"
assert max_abs_diff(my_weights, reference) < 10 * spacing(w_top)
pinned(HOST, max_abs_diff(my_weights, reference), 0.0)  # the solution: host_average's update bit for bit
assert max_abs_diff(my_weights, large_weights) < 10 * spacing(w_top)
for solution, weights in ((HOST, my_weights), (True, host_weights)):
    gap = max_abs_diff(weights, large_weights)
    pinned(solution, (0 < gap <= spacing(w_top), f"{gap:.1e}"), (True, "1.5e-08"))  # "one float32 spacing"

# what the host holds: this MLP at N = 4 and N = 10
assert P == 203_530 and G == 4 * P and MiB == 2 ** 20
# f: the largest variable's (the first kernel's) share of G; weighted_mean's product and total are one variable's
f = max(int(np.prod(v.shape)) for v in model.trainable_variables) / P
assert f == 784 * 256 / P == share and f"{f:.1%}" == "98.6%"  # printed under the peaks' table
assert f"{G / MiB:.2f}" == "0.78"
# the measured peaks, in G (fetches, list and mean all traced): tracemalloc counts Python's small objects too. The
# list's rule is N + 2f (the prose: "N + 2f ..., f = 0.986", pinned above) and np.stack's N + (N + 1) f, "about 2N + 1"
# here, its rule in Problem 2's answer
keys = ("running sum, in place", "list, weighted_mean")  # the solutions', on any run
STACK = "list, np.stack mean (the 2018 post's)"  # the table's third row
assert list(peaks)[:3] == [*keys, STACK]
stack_peaks = peaks[STACK]
# Maintainer note, Problem 2's cell prints "8.9 G counted, 9.1 G measured"; numpy's working buffers make the rest. The
# rest is np.mean's own buffer beside its result, about 130 KiB (0.16 G) on one kernel's 4 fetches, for dividing its
# float32 sum by an integer count; measured here, not in the lesson: the sum alone allocates next to nothing
_kernel_fetches = np.ones((4, 784, 256), np.float32)
tracemalloc.start()
try:
    _kernel_mean = _kernel_fetches.mean(axis=0)
    mean_buffer = tracemalloc.get_traced_memory()[1] - _kernel_mean.nbytes  # bytes beside its result
finally:
    tracemalloc.stop()
_buf = mean_buffer / G  # in G
assert f"{round(mean_buffer / 2 ** 10, -1):.0f}" == "130" and f"{_buf:.2f}" == "0.16", mean_buffer
_k = np.ones((4, 784, 256), np.float32)
tracemalloc.start()
try:
    _s = _k.sum(axis=0)
    _sum_extra = tracemalloc.get_traced_memory()[1] - _s.nbytes
    tracemalloc.reset_peak()
    _base = tracemalloc.get_traced_memory()[0]
    _d = np.true_divide(_s, np.intp(4), out=_s, casting="unsafe")
    _div_extra = tracemalloc.get_traced_memory()[1] - _base
finally:
    tracemalloc.stop()
assert _sum_extra < 0.05 * mean_buffer and abs(_div_extra / mean_buffer - 1) < 0.05, (_sum_extra, _div_extra, mean_buffer)
assert f"{4 + 5 * f:.1f}" == "8.9" and f"{f:.3f}" == "0.986"  # "N + (N + 1) 0.986 = 8.9 G at N = 4"
for n in (4, 10):
    (run_sum, wm), st = (peaks[k][n] for k in keys), stack_peaks[n]
    assert abs(run_sum - 2) < 0.05, (n, run_sum)  # "stays at 2.0 G"
    assert abs(wm - (n + 2 * f)) < 0.1 and abs(wm - (n + 2)) < 0.1, (n, wm)  # "N + 2 for the list"
    assert abs(st - (2 * n + 1)) < 0.3, (n, st)  # Problem 2: "about 2N + 1"
    assert 0 <= st - (n + (n + 1) * f) < 0.3, (n, st)
    # Problem 2's cell (printed): 4 + 5 * 0.986 = 8.9 G counted against 9.1 G measured: the rest over
    # N + (N + 1) f is mostly numpy mean's own buffer (float32 sum / intp count, cast through float64), 0.16 G
    assert abs(st - (n + (n + 1) * f) - _buf) < 0.05, (n, st, _buf)
    assert run_sum < wm < st
assert f"{stack[4]:.1f}" == "9.1" and f"{4 + 5 * share:.1f}" == "8.9", stack  # printed: "8.9 G counted, 9.1 G measured"
# "only the list grows, by one gradient per micro-batch, from 6.0 G at N = 4 to 12.0 G at N = 10;
# the running sum, added in place, stays at 2.0 G"; "the np.stack mean's peak grows twice as fast"
assert [f"{peaks[k][n]:.1f}" for k in keys for n in (4, 10)] == ["2.0", "2.0", "6.0", "12.0"], peaks
assert abs((peaks[keys[1]][10] - peaks[keys[1]][4]) / 6 - 1) < 0.05  # one G per micro-batch
assert 1.8 < (stack_peaks[10] - stack_peaks[4]) / (peaks[keys[1]][10] - peaks[keys[1]][4]) < 2.2  # about 2N + 1

# the problems' answers
assert 0 == (max_abs_diff(one_update(0.1 / 4, [sum(g) for g in zip(*fetched)]), one_update(0.1, plain_mean(fetched))))  # "identical for N = 4"
gap3 = max_abs_diff(one_update(0.1 / 3, [sum(g) for g in zip(*fetched[:3])]), one_update(0.1, plain_mean(fetched[:3])))
top3 = max(float(np.abs(w).max()) for w in one_update(0.1, plain_mean(fetched[:3])))
assert gap3 == spacing(top3), (gap3, top3)  # "one float32 spacing apart for N = 3"
# the counted trade (two visible cells, memory then time): this MLP at N = 10, in gradients; 20 prices the copies on a GPU
assert N10 == 10 and copies == (N10 + 1) * G  # "copies N + 1 an update"
assert copies / G == 11  # "N + 1 copies, 11 G at N = 10" (printed: 8.5 MiB every update to free 0.78 MiB once)
assert f"{copies / MiB:.1f}" == "8.5" and f"{N10 * G / MiB:.1f}" == "7.8"  # "8.5 MiB (7.8 MiB out, 0.78 MiB back)"
# the 63 cut 16 + 16 + 16 + 15: plain_mean gives each part 1/4, weighted_mean 15/63 and 16/63
assert [float(w) for w in np.asarray(counts63) / 63] == [16 / 63] * 3 + [15 / 63]
# for scale (printed): "Under Adam that gradient is a fifth of what the device holds besides activations": the
# weights, a gradient, Adam's two slots and the accumulator, 5 G, one of them freed
assert held_adam == 5 * G and f"{held_adam / G:.0f}" == "5" and f"{G / held_adam:.0%}" == "20%"
assert f"{held_adam / MiB:.1f}" == "3.9"
# problem 2: 100 million float32 parameters at N = 10, in GB
assert G_big == 4e8 and N_big == 10
assert [f"{x / 1e9:.1f}" for x in (N_big * G_big, G_big, (N_big + 2) * G_big, 2 * G_big)] == [
    "4.0", "0.4", "4.8", "0.8"]  # the ten, a gradient, the list at worst, the running sum
# Problem 2's general rule, printed for f = 1 and f = 0.1: the list N + 2f gradients, np.stack N + (N + 1) f; "on ten
# equal layers, f = 0.1, 4.1 and 4.4 GB"; at f = 1, "4.8 and 8.4 GB" (the lines above)
assert (f_big, list_G, stack_G) == (0.1, N_big + 2 * 0.1, N_big + (N_big + 1) * 0.1)
assert [f"{x * G_big / 1e9:.1f}" for x in (list_G, stack_G)] == ["4.1", "4.4"]
assert [f"{x * G_big / 1e9:.1f}" for x in (N_big + 2 * 1.0, N_big + (N_big + 1) * 1.0)] == ["4.8", "8.4"]
# np.stack's readings on this MLP (the table's third row), stated: "9.1 and 21.0 G"
assert [f"{stack_peaks[n]:.1f}" for n in (4, 10)] == ["9.1", "21.0"], stack_peaks
assert f"{(2 * N_big + 1) * G_big / 1e9:.1f}" == "8.4"  # np.stack: the ten, a copy of a variable's ten, their mean
# the TF1 rebuild's mlp is 02's, kept in gradlab
import gradlab.classic.model
assert mlp is gradlab.lessons.tf1_mlp is gradlab.classic.model.mlp
# his graph: its placeholders feed apply_gradients, never the fetched gradients; run once on the 63 from the same
# start weights: "fed weighted_mean, one float32 spacing from the update the 63's own gradient gives; fed his plain
# mean, about 20,000 spacings off (3.0e-04)" (maintainer note: the prose now states "miss 1.98%" only)
assert len(grad_placeholders) == len(grads) == 4 and train_step.name == "apply/GradientDescent"
assert set(after) == {"weighted_mean", "his plain mean"} and len(fetched63) == 4
top_v1 = max(float(np.abs(w).max()) for w in large63)
assert max_abs_diff(after["weighted_mean"], large63) < 10 * spacing(top_v1), top_v1
assert max_abs_diff(after["weighted_mean"], large63) == spacing(top_v1)  # "1.0 spacing"
plain_gap = max_abs_diff(after["his plain mean"], large63)
assert f"{plain_gap:.1e}" == "3.0e-04" and 15_000 < plain_gap / spacing(top_v1) < 25_000, plain_gap
# "it misses by 1.98%" (01's ||u - u_B|| / ||u_B||, printed)
assert f"{misses['his plain mean']:.2%}" == "1.98%" and misses["weighted_mean"] < 1e-5, misses
# "with g-bar the mean of his three 16-row parts' gradients, plain - g_B = (g_4 - g-bar)/84, so the miss is
# |g_4 - g-bar| / |g_B| = 1.661 over 84" (printed, with 1.98%): the algebra on the fetched parts, then the numbers
_plain, _gB = plain_mean(fetched63), feeds["the 63's own gradient"]
_lean = [p - b - (g4 - gb) / 84 for p, b, g4, gb in zip(_plain, _gB, fetched63[3], g_bar)]
assert max(float(np.abs(v).max()) for v in _lean) < 1e-6, "plain - g_B = (g_4 - g-bar) / 84"
assert f"{scatter:.3f}" == "1.661" and f"{scatter / 84:.2%}" == f"{misses['his plain mean']:.2%}" == "1.98%", scatter
# "as 02's plain mean missed 32 + 31 by 1.07% ... (02's: 1.345 over 126)": 02's stored output
import json as _json
_out02 = "".join("".join(o.get("text", "")) for c in _json.load(open("02-tower-averaging.ipynb"))["cells"]
                 for o in c.get("outputs", []))
assert "|g_0 - g_1| / |g_B| = 1.345, divided by 2B = 126: 1.07%" in _out02
# fed weighted_mean, "exactly, 1.0 spacing off": verdict counts at the weights, since the update is read off weights
# many times larger than it (its largest entry against the largest weight, 0.161)
assert verdict(after["weighted_mean"], large63, start=w0) == "exact: 1.0 spacings"
assert verdict(after["his plain mean"], large63, start=w0) == "miss 1.98%"
_update_top = max(float(np.abs(a - b).max()) for a, b in zip(large63, w0))
assert f"{top_v1:.3f}" == "0.161" and top_v1 > 5 * _update_top, (top_v1, _update_top)
# the Predict's answer: "percent-sized, 1.98%. Far past rounding ... far under 10%: his 15 rows get a quarter of the say
# for 15/63 of the rows, each 16 a quarter for 16/63"
from fractions import Fraction as _F
assert _F(1, 4) > _F(15, 63) and _F(1, 4) < _F(16, 63)
assert 0.005 < misses["his plain mean"] < 0.05  # "about 1%", not rounding, not about 10%
assert np.array_equal(x63, mnist.x_train[128:191]) and counts63 == [16, 16, 16, 15]
# the exercise's checker fails a step whose weights are right but which adds out of place (about three gradients at
# its peak), naming the peak: the running sum's two gradients are the skill the exercise asks for
import tensorflow as tf


def _out_of_place_step(x, y, accum_steps, optimizer):  # a natural, correct running sum, not in place
    total = None
    for x_i, y_i in zip(np.array_split(x, accum_steps), np.array_split(y, accum_steps)):
        newest, n = [t.numpy() for t in micro_grads(x_i, y_i)[1]], np.float32(len(x_i))
        total = [n * g for g in newest] if total is None else [a + n * g for a, g in zip(total, newest)]
    optimizer.apply_gradients(zip([tf.constant(a / np.float32(len(x))) for a in total], model.trainable_variables))


try:
    check_host_step(_out_of_place_step)  # its weights are right; its peak is not
    raise RuntimeError("an out-of-place running sum was expected to fail the checker on its host peak")
except AssertionError as _e:
    _report = str(_e)
assert _report.startswith("your weights are right, but your host peak is"), _report
_report_peak = float(_report.split("your host peak is ")[1].split()[0])
assert 2.5 < _report_peak < 4.5, _report_peak  # about three: the old total, the newest and the new total
# the cost, timed on this machine (c14-c23): only what holds on any busy 2-core host is asserted; the prose quotes the
# stored run's digits. "The compute dominates on the stored run": d is the slowest stage
assert len(xs10) == N10 == 10 and all(len(a) == 16 for a in xs10)
assert min(d_ms, c_ms, s_ms) > 0 and d_ms > max(c_ms, s_ms), (d_ms, c_ms, s_ms)
# the learner's schedule, fed the measured stages: host_schedule's totals, and "d + c + s + (N - 1) max(d, c, s) + c"
assert schedule in (my_schedule, solution_schedule) and len(schedule_cases) == 5
assert len({max(range(3), key=lambda k: a[k]) for a in schedule_cases if len(set(a[:3])) == 3}) == 3  # each slowest once
for _args in (*schedule_cases, (d_ms, c_ms, s_ms, N10)):
    _d4, _c4, _s4, _n4 = _args
    _want = tuple(host_schedule(*_args, overlap=o)["total"] for o in (False, True))
    assert np.allclose(schedule(*_args), _want, rtol=1e-9) and abs(
        _want[1] - (_d4 + _c4 + _s4 + (_n4 - 1) * max(_d4, _c4, _s4) + _c4)) < 1e-9, (_args, _want)
assert np.allclose(predicted, [host_schedule(d_ms, c_ms, s_ms, N10, overlap=o)["total"] for o in (False, True)], rtol=1e-9)
assert predicted[1] < predicted[0]
# the checker fails the natural slips: no copy back, and N max(d, c, s) (the first micro-batch's earlier stages hidden)
for _slip in (lambda d, c, s, n: (n * (d + c + s), d + c + s + (n - 1) * max(d, c, s)),
              lambda d, c, s, n: (n * (d + c + s) + c, n * max(d, c, s) + c)):
    try:
        check_schedule(_slip)
        raise RuntimeError("a slipped schedule was expected to fail check_schedule")
    except AssertionError as _e:
        assert "host_schedule's" in str(_e), _e
# the overlap, built: the same mean as serial_sum ("0.0 spacings": the same float32 additions in the same order),
# and, timed under load, a loose band only: overlapped within 3x of one after another (1.1 to 1.4 on stored runs;
# thread hand-offs on two shared cores under two nbval workers can cost more), both medians positive
assert overlapped_sum in (my_overlapped_sum, solution_overlapped_sum)
if overlapped_sum is solution_overlapped_sum:
    assert overlap_gap == 0, overlap_gap
assert overlap_gap <= 10, overlap_gap
assert set(runs) == {serial_sum, overlapped_sum} and all(len(t) == 9 for t in runs.values())
assert 0 < measured[1] < 3 * measured[0], measured
# the checker fails an overlap that drops a micro-batch (a natural slip: range(len(xs) - 1))
try:
    check_overlapped(lambda xs, ys: serial_sum(xs[:-1], ys[:-1]))
    raise RuntimeError("a dropped micro-batch was expected to fail check_overlapped")
except AssertionError as _e:
    assert "spacings from serial_sum's" in str(_e), _e
# the cut pricing left no trace in the prose
import json as _json
_md = " ".join("".join(c["source"]) for c in _json.load(open("03-host-averaging.ipynb"))["cells"]
               if c["cell_type"] == "markdown")
assert "22.8" not in _md and "[20](20-host-cost.ipynb)" in _md
# the three-lane timeline draws the schedule the learner computed, with the queue's 2 buffers a side (which never bind
# while d is the slowest stage): its totals are `predicted`'s
assert np.allclose(drawn, predicted, rtol=1e-9), (drawn, predicted)
# the titles, reworded in the lesson's call, give the device's count as "the schedule's worst case" (c20), 1 and 2,
# and the host's as 1 gradient + the running total in both panels ("as titled", c24)
_titles = [ax.get_title().split("\n")[1] for ax in fig.axes]
assert _titles == [f"worst case: {k} on the device, 1 gradient + the running total on the host"
                   for k in ("1 gradient", "2 gradients")], _titles
# "The timeline counts a gradient on the device from its compute's start to its copy's end: the schedule's worst case,
# 2 at once (the lower title)": one after another, 1. Two whole gradients coexist only if a copy
# outlasts a compute, c > d (Problem 3's 16 ms against 8.1 gives 2); "Here the copy (0.22 ms on the stored run) ends
# within the next forward pass (a third of 1.11 ms)": the stored run's c and d, quoted (a third of d: 2 of 6P FLOP a
# token); asserted only c < d (and s < d: "the adds outpace the compute"), which the stages' assert above holds on any run
_sched = [host_schedule(d_ms, c_ms, s_ms, N10, overlap=o, buffers=2)["held"] for o in (False, True)]
assert [h["device"] for h in _sched] == [1, 2], _sched
assert host_schedule(card_d, copy_ms, 0.0, N_big, buffers=2)["held"]["device"] == 2 and copy_ms > card_d
# the host's peak, in G (printed; the prose quotes the stored run): add_into scales and adds in place and serial_sum
# divides in place (tf.constant(acc / B) kept a second total beside the first: 3.0 G), so one after another the total
# and a fetch, 2.0 G, "as the timeline's title predicts" (1 gradient besides the total, both panels);
# overlapped at least that (3.1 G on the stored run, "a fetch over the lower title": an add waiting its turn still
# holds its fetch when the next arrives), and "At most 5: the total, the one being added, 2 queued, 1 being fetched"
assert [h["host"] for h in _sched] == [1, 1], _sched
assert len(held) == 2 and abs(held[0] - 2) < 0.1 and f"{held[0]:.1f}" == "2.0", held
assert held[0] - 0.1 < held[1] < 5 + 0.3, held
# c24 quotes the stored run: "ran 5% over" (printed: "measured +5% and +55%"), "1.17 of the 2 cores were busy, against
# 1.01 one after another: the threads mostly took turns" (the GIL named as the likely cause, not measured):
# a loose band only (load only lowers it; two threads truly at once would approach 2 on two free cores)
assert len(busy) == 2 and all(0 < b < 1.5 for b in busy), busy
# Problem 3: 100 M float32 parameters over a Gen4 slot's PCIe 4.0 x16 at 25 GB/s, an H100 PCIe (a Gen5 card) at 40% of 756 TFLOP/s, 6P FLOP a
# token, N = 10, 4,096 tokens a micro-batch: "16 ms", "8.1 ms", "d + (N + 1)c = 184 ms", "2.3 times", "81 ms", "8,064"
assert (bus, F, T_tok, G_big, N_big) == (25e9, 0.40 * 756e12, 4096, 4e8, 10)
# "PCIe 4.0 x16 (32 GB/s raw each way)": 16 GT/s a lane, 16 lanes, 128b/130b coding, 8 bits a byte
assert f"{16e9 * 16 * 128 / 130 / 8 / 1e9:.0f}" == "32"
assert f"{copy_ms:.0f}" == "16" and f"{card_d:.1f}" == "8.1" and card_d < copy_ms  # the bus sets the pace
assert abs(bus_bound - (card_d + (N_big + 1) * copy_ms)) < 1e-9 and f"{bus_bound:.0f}" == "184"
assert f"{N_big * card_d:.0f}" == "81" and f"{bus_bound / (N_big * card_d):.1f}" == "2.3"
assert f"{4 * F / (6 * bus):,.0f}" == "8,064" and abs(6 * (G_big / 4) * (4 * F / (6 * bus)) / F - G_big / bus) < 1e-12
# "in its own Gen5 slot (63 GB/s after coding; take 50)": 32 GT/s a lane, 16 lanes, 128b/130b; "a copy takes 8 ms, just
# under the compute: 97 ms, 1.2 times the card's, and the bar halves to 4,032 tokens"
assert f"{32e9 * 16 * 128 / 130 / 8 / 1e9:.0f}" == "63" and bus5 == 50e9
assert f"{copy5:.0f}" == "8" and copy5 < card_d and f"{gen5:.0f}" == "97" and f"{gen5 / (N_big * card_d):.1f}" == "1.2"
assert abs(gen5 - (card_d + copy5 + (N_big - 1) * card_d + copy5)) < 1e-9  # d + c + (N - 1) max(d, c) + c
assert f"{4 * F / (6 * bus5):,.0f}" == "4,032"
# Problem 1's uneven case (printed): "the plain sum and the plain mean both miss the 63's own update by 1.91% on the
# Keras MLP (his TF1 model: 1.98%)": make_model("mlp", seed=0), not his graph's tf1_mlp with its own initial weights ...
# sum n_i g_i at 0.1/63 lands 1.0 spacing off"
assert [verdict(uneven[k], own63, start=w_start) for k in uneven] == ["miss 1.91%", "miss 1.91%", "exact: 1.0 spacings"]
print("lesson 03: every number the prose states checks out")
