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
assert (len(fetched), sum(len(f) for f in fetched)) == (10, 40)  # graph calls, arrays copied out
assert (round(copied / 2**20, 2), round(N * G / 2**20, 2)) == (7.79, 7.76)

# the round trip's time on this CPU: the conclusions the spread supports
assert ratio_quartiles(ms, "host_step_compiled", "in-graph step")[1] > 1, ms  # slower, as a median ratio
assert extra_calls > max(copies, mean_ms), (extra_calls, copies, mean_ms)  # graph calls: the largest part

# device memory: fetch holds about one gradient; your loop at least an accumulator more
fetch_peak = peak["host_step, its micro-batches (fetch)"]
assert 0.95 < fetch_peak < 1.3, fetch_peak  # about one gradient (BFC may round a chunk up)
assert saved[0] > 0.9, saved  # about the accumulator, or more, while the micro-batches run (a CI run read 0.95)
assert (round(x100.nbytes / G, 2), round(x100[:10].nbytes / G, 2)) == (0.39, 0.04)  # the images

# the prediction's numbers as the prose rounds them
assert (round(mlp100m["compute"], 1), round(mlp100m["device memory"], 1),
        round(mlp100m["PCIe copies"])) == (1.2, 6.0, 69)
assert round(mlp100m["PCIe copies"] / device_ms(mlp100m)) == 11
assert round(mlp100m_tf32["PCIe copies"] / device_ms(mlp100m_tf32)) == 11
assert mlp100m["numpy sum"] > device_ms(mlp100m) + mlp100m["PCIe copies"]  # the sum sets the pace
assert ours["compute"] < ours["PCIe copies"] < 11 * med["empty call"]  # this lesson's MLP: calls
assert round(mlp100m_tf32["compute"], 2) == 0.16 and round(mlp100m["PCIe copies"] / 2) == 34

# the schedules: yours against gradlab's, its figure, and what buffering buys
for name, (o, b) in cases.items():
    assert abs(my_schedule_ms(d, c, s, 10, o, b) - schedules[name]["total"]) < 1e-9, name
shown = ("one after another", "overlapped, no limit", "overlapped, 2 buffers")  # the figure's panels
assert totals == tuple(schedules[name]["total"] for name in shown)
serial, two = schedules["one after another"]["total"], schedules["overlapped, 2 buffers"]["total"]
assert abs(two - schedules["overlapped, no limit"]["total"]) < 1e-9  # two buffers lose nothing
assert serial - schedules["overlapped, 1 buffer"]["total"] < 0.2 * (serial - two)  # one hides little
assert abs(hidden - (serial - two)) < 1e-9
assert schedules["overlapped, 2 buffers"]["held"] == {"device": 2, "host": 2}
assert schedules["overlapped, 1 buffer"]["held"] == {"device": 1, "host": 1}
assert schedules["one after another"]["held"] == {"device": 1, "host": 1}
assert schedules["overlapped, no limit"]["held"] == {"device": 10, "host": 9}

# the problems' answers
assert abs(one_sum - c2) < 1e-9  # problem 2: at 320 GB/s one sum takes one copy's time
assert abs(buffered2 - (d2 + N * c2 + one_sum + c2)) < 1e-9  # ... and the bus never waits
assert abs(overlapped2 - buffered2) < 1e-9  # two buffers a side lose nothing
assert (round(serial2, 1), round(buffered2, 1), round(no_host2, 2)) == (137.2, 75.6, 69.35)
