"""Lesson 06's authors' checks: re-check every number the prose states, and each conclusion it draws
from a timing or a memory peak, against the names the notebook has just computed.

Run by the lesson's last code cell (`%run -i checks/06.py`), so nbval fails when a run disagrees
with the text. Not part of the lesson.
"""
# host memory (tracemalloc: the same on every run)
assert round(share, 3) == 0.986  # the largest variable's share of G
assert (round(peaks["host_step"], 1), round(peaks["host_step_running"], 1),
        round(peaks["gradlab's host_average"], 1)) == (12.0, 2.0, 2.0)
assert round(peaks["host_step"] / peaks["host_step_running"]) == 6  # "six times less"
assert (len(calls), len(fetched), sum(len(f) for f in fetched)) == (10, 10, 40)  # calls counted, arrays out
assert (round(copied / 2**20, 2), round(N * G / 2**20, 2)) == (7.79, 7.76)

# the round trip's time on this CPU: the conclusions the spread supports
assert ratio_quartiles(ms, "host_step_compiled", "in-graph step")[1] > 1, ms  # slower, as a median ratio
moved = host["copies out"] + host["copy back"]  # the bytes themselves, out and back
assert extra_calls > max(handing, mean_ms, moved), (extra_calls, handing, mean_ms, moved)  # calls: the largest
assert extra_calls + handing > mean_ms + moved, host  # calls, with handing numpy, outweigh the rest
assert abs(extra_calls - (loop_gap + host["second call"])) < 1e-12 and extra > 0, (extra, loop_gap)
assert loop_gap < 10 * host["second call"], host  # "not 10 x 0.15": a loop iteration costs too
assert moved < extra_calls, host  # "calls, not copies, cost the most"

# device memory: fetch holds its gradient and less than your loop, in both phases. The readings move
# between runs of the notebook (fetch 1.05 to 2.03 G, the saving 0.96 to 1.89 G while the micro-batches
# run, 0.42 to 0.97 at the apply), so only the conclusion is pinned
fetch_peak = peak["host_step, its micro-batches (fetch)"]
assert 0.95 < fetch_peak < peak["the in-graph step, its loop"], peak  # the gradient, and less than yours
assert saved[0] > 0.5 and saved[1] > 0, saved  # host averaging holds less in both phases
assert (round(x100.nbytes / G, 2), round(x100[:10].nbytes / G, 2)) == (0.39, 0.04)  # the images
assert round(images, 2) == 0.35  # of the saving: the images the loop takes in beyond fetch's 10

# the FLOP count of one micro-batch's graph: five matmuls (no input gradient for the first layer)
assert len(matmuls) == 5 and flop == 4 * 784 * 256 * 10 + 6 * 256 * 10 * 10, (len(matmuls), flop)
assert (round(flop / 1e6, 2), round((4 + 2 * (1 - share)) * n_params * 10 / 1e6, 2),
        round(6 * n_params * 10 / 1e6, 2)) == (8.18, 8.20, 12.21)

# the prediction's numbers as the prose rounds them
assert (round(mlp100m["compute"], 1), round(mlp100m["device memory"], 1),
        round(mlp100m["PCIe copies"])) == (0.8, 4.0, 69)
assert round(mlp100m["compute"] * peak_flops["FP32"] / (mlp100m["device memory"] * 2.0e12)) == 5
assert round(mlp100m["PCIe copies"] / device_ms(mlp100m)) == 17
assert round(mlp100m_tf32["PCIe copies"] / device_ms(mlp100m_tf32)) == 17
assert mlp100m["numpy sum"] > device_ms(mlp100m) + mlp100m["PCIe copies"]  # the sum sets the pace
assert ours["compute"] < ours["PCIe copies"] < extra_calls  # this lesson's MLP: calls decide
assert round(mlp100m_tf32["compute"], 2) == 0.11 and round(mlp100m["PCIe copies"] / 2) == 34

# the worked example before the stub (d, c, h = 1, 2, 3 ms; 3 micro-batches): micro-batch 1 computes
# at 3, once 0's copy ends
assert [s for _, s, _ in example["device"]] == [0.0, 3.0, 8.0] and example["total"] == 18.0
assert gl.lessons.host_schedule(1.0, 2.0, 3.0, 3)["total"] == 14.0
assert gl.lessons.host_schedule(1.0, 2.0, 3.0, 3, overlap=False)["total"] == 20.0

# the schedules: yours against gradlab's, its figure, and what buffering buys
for name, (o, b) in cases.items():
    assert abs(schedule_ms(d, c, h, 10, o, b) - schedules[name]["total"]) < 1e-9, name
shown = ("one after another", "overlapped, no limit", "overlapped, 1 buffer", "overlapped, 2 buffers")
assert totals == tuple(schedules[name]["total"] for name in shown)
serial, two = schedules["one after another"]["total"], schedules["overlapped, 2 buffers"]["total"]
assert abs(two - schedules["overlapped, no limit"]["total"]) < 1e-9  # two buffers lose nothing
assert serial - schedules["overlapped, 1 buffer"]["total"] < 0.2 * (serial - two)  # one hides little
assert abs(hides[2] - (serial - two)) < 1e-9 and hides[1] < 0.03 * serial  # "only 3.62 ms": little
# while the sum is the slowest stream, what hides does not depend on its rate: (N - 1)(d + c) with two
# buffers, (N - 1) d with one
assert h > c + d and (round(hides[2], 2), round(hides[1], 2)) == (59.87, 3.62)
assert abs(hides[2] - 9 * (d + c)) < 1e-9 and abs(hides[1] - 9 * d) < 1e-9
assert (round(d, 2), round(c, 2)) == (0.4, 6.25)
assert schedules["overlapped, 2 buffers"]["held"] == {"device": 2, "host": 2}
assert schedules["overlapped, 1 buffer"]["held"] == {"device": 1, "host": 1}
assert schedules["one after another"]["held"] == {"device": 1, "host": 1}
assert schedules["overlapped, no limit"]["held"]["device"] == 10  # the device runs ahead

# the memory budget: the 100M MLP (784-125,786-10) on an 80 GB card
assert abs(795 * width + 10 - 100e6) < 1000 and round(784 * width / P, 3) == 0.986  # shaped as this MLP
assert round(budget["accumulator"] / card, 3) == 0.005  # "0.5% of the card"
# "108 times the in-graph step's device work" in the stored run (it moves with numpy's rate); many
# times on any run. The in-graph step's device work: dev plus 3 passes of its accumulator a micro-batch
assert round(acc_ms, 1) == 6.0 and abs(in_graph_ms - (dev + acc_ms)) < 1e-9
assert serial / in_graph_ms > 10, (serial, in_graph_ms)
assert round(card / 20 / 1e9) == 4 and round(4 / 20, 2) == 0.2  # "4 billion", "a fifth"

# the problems' answers, at P = 100 million parameters, N = 10, B = 100
G_P = 4 * P  # one float32 gradient, bytes
assert (round(N * G_P / 1e9, 1), round(N * G_P / 2**20), round(G_P / 1e9, 1), round(G_P / 2**20)) == (
    4.0, 3815, 0.4, 381)  # problem 1
assert (round((N + 2 * share) * G_P / 1e9, 2), round((1 + share) * G_P / 1e9, 2)) == (4.79, 0.79)
assert round((10 + 2 * share) / (1 + share)) == 6  # "6 times less" (11 when no variable dominates)
one_sum = 1000 * 5 * G_P / (5 * 64e9)  # ms: one sum (5 passes) at 320 GB/s
d2, c2 = device_ms(mlp100m) / N, mlp100m["PCIe copies"] / (N + 1)  # ms per micro-batch: device, bus
serial2, overlapped2, buffered2 = (schedule_ms(d2, c2, one_sum, N, o, b) for o, b in
                                   ((False, None), (True, None), (True, 2)))
assert (round(one_sum, 2), round(d2, 2), round(N * c2, 1)) == (6.25, 0.4, 62.5)
assert round(1 - buffered2 / serial2, 2) == 0.44
assert abs(one_sum - c2) < 1e-9  # problem 2: at 320 GB/s one sum takes one copy's time
assert abs(buffered2 - (d2 + N * c2 + one_sum + c2)) < 1e-9  # ... and the bus never waits
assert abs(overlapped2 - buffered2) < 1e-9  # two buffers a side lose nothing
assert (round(serial2, 1), round(buffered2, 1)) == (135.3, 75.4)
work = 4 + 2 * (1 - share)  # FLOP per parameter and example, as counted
assert round(work, 2) == 4.03
for flops, B_even, per_micro in ((peak_flops["FP32"], 8700, 870), (peak_flops["TF32"], 64500, 6450)):
    B_min = (N + 1) * 4 * flops / (64e9 * work)  # problem 3: "about"
    assert round(B_min, -2) == B_even and round(B_min / N, -1) == per_micro, B_min
