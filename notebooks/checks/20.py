"""Lesson 20's authors' checks: re-check every number the prose states, and each conclusion it draws
from a timing or a memory peak, against the names the notebook has just computed.

Run by the lesson's last code cell (`%run -i checks/20.py`), so nbval fails when a run disagrees
with the text. Not part of the lesson.
"""
# the Problem's answer comes from gradlab's host_offload model (its own tests: tests/studies/test_host_offload.py):
# the names below are the ones this file re-checks
from gradlab.studies.host_offload import CASES, HOST_BYTES as host_bytes, ON_CARD as on_card
# the Problem's visible arithmetic (the notebook's d7, c7, h7, acts, room) against gradlab's model of it
_shown = dict(d7=d7, c7=c7, h7=h7, acts=acts, room=room, d10=d10, c10=c10, h10=h10)
pb = gl.lessons.offload_problem(card=card, micro_batches=N, flops=achieved, host_rate=host_rate)
assert all(abs(a - b) < 1e-9 for a, b in zip((_shown["d7"], _shown["c7"], _shown["h7"]), pb.micro[7e9])), _shown
assert all(abs(a - b) < 1e-9 for a, b in zip((_shown["d10"], _shown["c10"], _shown["h10"]), pb.micro[10e9])), _shown
assert abs(_shown["acts"] - pb.acts) < 1e-9 and abs(_shown["room"] / 8 - pb.fits["accumulate on the card"]) < 1e-9
assert abs(_shown["room"] / 6 - pb.fits["copy, two device buffers"]) < 1e-9
assert abs(N * d10 + c10 + h10 + c10 - pb.problem[10e9][1]["overlapped, 2 buffers"]["total"]) < 1e-9  # "69.6 s"
assert f"{N * d10 + c10 + h10 + c10:.1f}" == "69.6" and h10 < d10
# the 100M MLP's schedules (the cell prints the learner's `schedule` and the one-after-another sums): gradlab's
cases = {"one after another": (False, None), "overlapped, 1 buffer": (True, 1), "overlapped, 2 buffers": (True, 2)}
schedules = {sum_name: {name: gl.lessons.host_schedule(d, c, h_ms, 10, o, b) for name, (o, b) in cases.items()}
             for sum_name, h_ms in (("numpy's sum", h), ("a sum at 320 GB/s", c))}
fast = schedules["a sum at 320 GB/s"]
assert abs(serial - schedules["numpy's sum"]["one after another"]["total"]) < 1e-9
assert abs(fast_serial - fast["one after another"]["total"]) < 1e-9
serial = schedules["numpy's sum"]["one after another"]["total"]
assert abs(best - schedules["numpy's sum"]["overlapped, 2 buffers"]["total"]) < 1e-9
best = schedules["numpy's sum"]["overlapped, 2 buffers"]["total"]
assert abs(lapped - fast["overlapped, 2 buffers"]["total"]) < 1e-9
lapped = fast["overlapped, 2 buffers"]["total"]
assert CASES == cases and pb.card == card and pb.N == N and pb.host_rate == host_rate and pb.flops == achieved
problem, kept, layer, logits, acts, scores = pb.problem, pb.kept, pb.layer, pb.logits, pb.acts, pb.scores
h_7b, L_7b, tokens, compute_s = pb.width, pb.layers, pb.tokens, pb.compute[10e9]
pace_rate, t_copy, t_sum, d7, c7 = pb.pace_rate, pb.t_copy, pb.t_sum, pb.d7, pb.c7

# 03 measures that the host step matches one large batch; the code is 03's loop with a list
assert host_step.__name__ == "host_step"

# host memory: lesson 03's rules (03 measures them at N = 4: 2.0, 6.0 and 9.1 G), evaluated at this lesson's N = 10
assert round(share, 3) == 0.986 and f"{share:.1%}" == "98.6%"  # f, the largest variable's share of G, as 03 prints it
assert N == 10
host_list = N + 2 * share  # a list averaged by weighted_mean: host_step's (N + 2f)G
assert (f"{host_list:.1f}", f"{N + (N + 1) * share:.1f}") == ("12.0", "20.8")  # weighted_mean's, np.stack's at N = 10
assert (f"{4 + 2 * share:.2f}", f"{4 + 5 * share:.2f}") == ("5.97", "8.93")  # the rules at N = 4, 03's

# the three steps against one large batch: rounding
assert max_abs_diff(large_equal, large_batch(equal_batches)) == 0
# the round trip's time on this CPU. Timings move with the machine and its load, so only what the prose concludes is
# pinned, with room for a loaded CI machine, as medians of ratios taken within interleaved rounds (the stored run:
# host_step / accumulate about 1.0, accumulate / one fused call about 2.3). "host_step takes about as long as accumulate"
assert host_vs_acc[0] <= host_vs_acc[1] <= host_vs_acc[2] and 0.7 < host_vs_acc[1] < 1.45, host_vs_acc
# "accumulate longer than the fused call (1.97 times)": clearly longer (1.97 stored, 2.15 and 2.35 before; a loaded machine moves it)
assert acc_vs_fused[1] > 1.3 and ratio_quartiles(ms, "host_step", "one fused call")[1] > 1.3, acc_vs_fused
assert abs(host_vs_acc[1] - np.median(ms["host_step"] / ms["accumulate"])) < 1e-12
# "Here host_step took about as long as accumulate" (no digits: 1.00 stored, 0.90, 0.99 and 0.93 before): a band for a loaded machine. "accumulate copies nothing": it
# writes variables and returns nothing, host_step copies N gradients out
assert 0.7 < host_vs_acc[1] < 1.45, host_vs_acc
assert tuple(ms) == ("one fused call", "accumulate", "host_step")
# the figure: the three steps' medians
assert [round(float(v), 9) for v in q[:, 1]] == [round(float(np.median(ms[n])), 9) for n in names]

# device memory: fetch holds its gradient and less than the loop while the micro-batches run. The readings can
# move between runs (the BFC allocator's chunks; the prose states no range across runs), so only the
# conclusion is pinned
fetch_peak = peak[fetch_name]
# "about one gradient": 1.02 in the stored run; a CI run read 1.61 (fetch) and 2.57 (the loop), the allocator's
# chunks, so the bands hold the conclusion only: fetch holds less than the loop, about a gradient less
assert 0.9 < fetch_peak < 2.0 and fetch_peak < peak[loop_name], peak
# "saves about one gradient": 1.01 and 0.98 in two runs; one run read the loop at 2.55 (the allocator's chunks), so the band is wide
assert abs(saved - (peak[loop_name] - fetch_peak)) < 1e-12 and 0.6 < saved < 1.7, saved
# one RAM on a CPU: host_step's list "about 12.0 G of the same RAM (the setup's last line)", by 03's rule, not
# measured here (numpy's arrays lie outside the allocator device_peak reads): far more than the loop's two
assert f"{host_list:.1f}" == "12.0" and host_list > 5 * peak[loop_name], (host_list, peak)
# the loop is fed tensors made before its measurement: converting a numpy argument copies it (TensorFlow 2.21:
# a later write to the array is not seen), and that copy can count in the allocator's peak
assert isinstance(xt, tf.Tensor) and xt.shape == x100.shape
probe = np.ones(4, np.float32)
probe_t = tf.convert_to_tensor(probe)
probe[0] = 5.0
assert float(probe_t[0]) == 1.0  # a copy, not a view
# fetch: one gradient at a time. Its 10 digits, converted inside, are not pinned: they counted in some runs (1.05,
# 1.07) and not in others (1.01, 1.02), with the same code
assert fetch_peak >= 1.0, peak

# the FLOP model (the appendix): five matmuls a micro-batch, (4 + 2(1 - f))Pb, fewer than 6Pb; counted from the graph
graph = micro_grads.get_concrete_function(x100[:10], y100[:10]).graph  # one micro-batch of 10
matmuls = [op for op in graph.get_operations() if op.type == "MatMul"]
flop = sum(2 * op.inputs[0].shape.num_elements() * op.outputs[0].shape[-1] for op in matmuls)
assert len(matmuls) == 5 and flop == 4 * 784 * 256 * 10 + 6 * 256 * 10 * 10, (len(matmuls), flop)
assert abs(flop - (4 + 2 * (1 - share)) * n_params * 10) < 0.01 * flop and flop < 6 * n_params * 10

# where a micro-batch's FP32 compute equals its gradient's copy: 791 examples (P cancels)
assert abs(b_even - 4 * 51e12 / (64e9 * (4 + 2 * (1 - share)))) < 1e-9 and f"{b_even:.0f}" == "791"
# numpy's sum catches up with the compute only at b_even x (the bus over numpy's rate): later than the copy,
# "only at about 5,065" examples
sum_catch = 20 * 51e12 / (host_rate * (4 + 2 * (1 - share)))  # compute (4 + 2(1 - f))Pb = 5 passes over 4P
assert abs(sum_catch - b_even * 64e9 / (host_rate / 5)) < 1e-6 and sum_catch > b_even
assert abs(sum_even - sum_catch) < 1e-6 and f"{sum_even:,.0f}" == "5,065"
# the Problem's cell prints, in bfloat16 at its rate: a copy hides behind 1,575 tokens, numpy's sum only behind
# 20,160, and 32,768 clear it by 1.6 times (d / h at 7 billion: the device's margin over numpy's sum)
assert (f"{t_copy:,.0f}", f"{t_sum:,.0f}", f"{tokens / t_sum:.1f}") == ("1,575", "20,160", "1.6")
assert abs(tokens / t_sum - d7 / (5 * 4 * 7e9 / host_rate)) < 1e-9

# the model's numpy rate is assumed, 50 GB/s read and written, so every modelled number below holds on any machine;
# this machine's measured rate (cell "How numpy's rate was found") is printed beside it and asserts nothing
assert host_rate == 50e9 and sum_rate > 0
# "numpy's sum at 50 GB/s, 400 ms" (5.8 times the copies, as the cell prints)
assert round(host_sum) == 400 and f"{host_sum / copy:.1f}" == "5.8" and abs(host_sum - 1000 * 5 * 10 * 4e8 / 50e9) < 1e-9
# "the in-graph step's device work is 10.6 ms": the gradients' 4.0 and the accumulator's 6.6, one meaning (03 quotes 10.6)
assert f"{in_graph_ms:.1f}" == "10.6" and f"{dev:.1f}" == "4.0" and f"{acc_ms:.1f}" == "6.6"
# the prediction's numbers as the prose rounds them
assert (round(mlp100m["compute"], 1), round(mlp100m["device memory"], 1),
        round(mlp100m["PCIe copies"])) == (0.8, 4.0, 69)
assert round(mlp100m["compute"] * fp32_flops / (mlp100m["device memory"] * 2.0e12)) == 5
assert round(mlp100m["PCIe copies"] / device_ms(mlp100m)) == 17
assert mlp100m["numpy sum"] > device_ms(mlp100m) + mlp100m["PCIe copies"]  # the sum sets the pace
assert round(mlp100m["PCIe copies"] / 2) == 34

# the overlap, from gradlab's host_schedule at 100M (per micro-batch d, c, h ms; 10 micro-batches)
slow, fast = schedules["numpy's sum"], schedules["a sum at 320 GB/s"]
assert tuple(cases) == ("one after another", "overlapped, 1 buffer", "overlapped, 2 buffers")
assert tuple(slow) == tuple(fast) == tuple(cases)
assert (round(d, 2), round(c, 2)) == (0.40, 6.25) and abs(h - host_sum / 10) < 1e-12
# numpy's sum is the slowest stage (on any run: it would need 5 x 64 GB/s to keep pace), so what two buffers
# hide is the device's and the bus's work on nine micro-batches, (N - 1)(d + c): "70 times overlapped" against 75
assert h > c + d
assert abs((serial - best) - 9 * (d + c)) < 1e-9, (serial, best)
assert serial == slow["one after another"]["total"] and best == slow["overlapped, 2 buffers"]["total"]
# a host at 320 GB/s (one sum = one copy's time): two buffers a side hide 44.3% (printed), with 2 gradients on the device
f_serial = fast["one after another"]["total"]
assert (round(f_serial, 1), round(fast["overlapped, 2 buffers"]["total"], 1)) == (135.3, 75.4)
assert abs(fast["overlapped, 2 buffers"]["total"] - (d + 10 * c + c + c)) < 1e-9  # the bus never waits
assert abs(fast_hidden - (1 - fast["overlapped, 2 buffers"]["total"] / f_serial)) < 1e-12
assert round(fast_hidden, 3) == 0.443  # as printed
# "75.4 ms with two buffers a side, 7.1 times the in-graph step: the bus's 10 + 1 copies alone take 69 ms, at
# least 6.5 times" (no timing in them)
assert lapped == fast["overlapped, 2 buffers"]["total"] and round(in_graph_ms, 1) == 10.6
assert (f"{lapped / in_graph_ms:.1f}", f"{copy:.0f}", f"{copy / in_graph_ms:.1f}") == ("7.1", "69", "6.5")
assert lapped / in_graph_ms >= 7  # the verdict table: "at least 7 times the in-graph step's device work"
assert lapped > copy and abs(copy - 11 * c) < 1e-9
assert round(5 * 4 * P / (1e-3 * c) / 1e9) == 320  # one sum's 5 passes in one copy's time: 320 GB/s
assert fast["overlapped, 2 buffers"]["held"] == {"device": 2, "host": 2}
assert fast["overlapped, 1 buffer"]["held"] == {"device": 1, "host": 1}
# the figure draws these two schedules: numpy's sum, then a sum at 320 GB/s, two buffers a side
assert totals_drawn == (best, lapped), (totals_drawn, best, lapped)
# the learner's schedule (or the solution), checked against host_schedule before the cells that use it
assert abs(schedule(d, c, h, 10, 2) - best) <= 1e-9 * best and abs(schedule(d, c, c, 10, 2) - lapped) <= 1e-9 * lapped

# the memory budget: the 100M MLP (784-125,786-10) on an 80 GB card
width = 125_786  # the 100M MLP: 784-125,786-10, this MLP widened
assert abs(795 * width + 10 - 100e6) < 1000 and round(784 * width / P, 3) == 0.986  # shaped as this MLP
assert round(4 * P / card, 3) == 0.005  # the cell's "0.5% of the card", the prose's "half a percent"
# "39 times the in-graph step" at the assumed numpy rate, two buffers a side (44 one after another)
assert (f"{best / in_graph_ms:.0f}", f"{serial / in_graph_ms:.0f}") == ("39", "44") and f"{best:.1f}" == "412.9"
# The in-graph step's device work: dev plus its accumulator's 3 passes of 4P a micro-batch
# (the gradient and the total read, the total written) and 3 an update (zeroed; divided once: read, written)
assert round(acc_ms, 1) == 6.6 and abs(acc_ms - 1000 * 33 * 4 * P / 2.0e12) < 1e-9
assert abs(in_graph_ms - (dev + acc_ms)) < 1e-9
assert serial / in_graph_ms > 10, (serial, in_graph_ms)

# the problem: 7B parameters, Adam in 16-bit (16 bytes a parameter, 12 of them on the host), an 80 GB
# card, N = 10 micro-batches of 32,768 tokens; compute at 40% of the H100 PCIe's 16-bit dense peak, as 05 assumes
assert on_card == {"accumulate on the card": 8, "copy every micro-batch": 4, "copy, two device buffers": 6}
assert (card / 8, card / 4) == (10e9, 20e9)  # the card alone: 10 and 20 billion, as the cell prints
P7, P10 = 7e9, 10e9
assert set(problem) == {P7, P10}
assert f"{8 * P7 / card:.0%}" == "70%" and f"{4 * P7 / card:.0%}" == "35%"  # the cards, as printed
assert abs(achieved - 0.40 * 756e12) < 1 and abs(compute_s - 6 * P10 * N * 32_768 / achieved) < 1e-9
assert f"{achieved / 756e12:.0%}" == "40%"  # the prose's assumed utilisation, 05's
assert round(6 * P7 * N * 32_768 / achieved, 1) == 45.5 and round(compute_s, 1) == 65.0
assert f"{6 * P7 * 32_768 / achieved:.2f}" == "4.55"  # the device's compute, a micro-batch
# accumulating on the card: compute, the fp32 mean out, the fp16 weights back and the sum on the card (no timing in it)
assert round(problem[P7][0], 1) == 46.5 and round(2 * P7 / 1e9) == 14  # "46.5 s"; "14 GB" a gradient
# the card's sum, each micro-batch: the fp16 gradient read (2P), the fp32 total read and written (4P + 4P)
assert abs(problem[P7][0] - (6 * P7 * N * 32_768 / achieved + 4 * P7 / 64e9 + 2 * P7 / 64e9
                             + N * 10 * P7 / 2.0e12)) < 1e-9
# the host design, from host_schedule at the assumed numpy rate (50 GB/s): the same on any machine
for P_x in (P7, P10):
    once_x, sched = problem[P_x]
    two_x = sched["overlapped, 2 buffers"]["total"]
    one_x = sched["overlapped, 1 buffer"]["total"]
    serial_x = sched["one after another"]["total"]
    h_x = 5 * 4 * P_x / host_rate  # numpy's sum, a micro-batch, at the assumed rate
    assert once_x < two_x <= one_x < serial_x, (once_x, two_x, one_x, serial_x)  # the card the faster
    assert serial_x > 1.3 * once_x, (once_x, serial_x)  # one after another, far slower
    assert sched["overlapped, 2 buffers"]["held"]["device"] == 2  # one more fp16 gradient on the card
    assert sched["overlapped, 1 buffer"]["held"]["device"] == 1
    # at the assumed rate the device is the slowest stage (2.80 s against 4.55 s at 7B): one buffer a side hides
    # the sums, the N copies stay in line with the compute, and a second device buffer hides them
    d_x, c_x = 6 * P_x * 32_768 / achieved, 2 * P_x / 64e9
    assert h_x < d_x, (P_x, h_x, d_x)
    assert abs(one_x - (N * (d_x + c_x) + h_x + c_x)) < 1e-9, (one_x, d_x, c_x, h_x)
    assert abs(two_x - (N * d_x + c_x + h_x + c_x)) < 1e-9, (two_x, d_x, c_x, h_x)
# at 10 billion the host design, the one that fits, costs more than the compute alone: "69.6 s" against 65.0
assert compute_s < problem[P10][1]["overlapped, 2 buffers"]["total"] < problem[P10][1]["one after another"]["total"]

# round 83: the 7B activations in 16-bit (Korthikanti et al., 2022), LLaMA 7B's shape, 32,768 tokens: exact
assert (h_7b, L_7b, tokens) == (4096, 32, 32_768)
assert (round(34 * tokens * h_7b * L_7b / 1e9), round(2 * tokens * h_7b * L_7b / 1e9, 1)) == (146, 8.6)
assert 2 * tokens * h_7b * L_7b < card - 8 * P7  # the checkpoints fit beside the accumulator at 7B
# overlapped, the host design still costs many times the in-graph step's device work (39 times)
assert best < serial
assert best / in_graph_ms > 10, (best, in_graph_ms)
# the device-memory readings within this run: each step's range holds its least reading, the one used
for name, p in device_peaks.items():
    assert min(p) <= peak[name] <= max(p), (name, p)
# the limits the answer states with the checkpoints, one layer recomputed (34 s h) and float32 logits
# of LLaMA's 32,000-token vocabulary, on the 80 GB card: 17.3 GB unrounded
# (the cell's own kept, layer, logits and acts; the limits from the unrounded 17.35 GB)
assert abs(kept - 2 * tokens * h_7b * L_7b / 1e9) < 1e-12 and abs(layer - 34 * tokens * h_7b / 1e9) < 1e-12
assert abs(logits - 4 * tokens * 32_000 / 1e9) < 1e-12 and abs(acts - (kept + layer + logits)) < 1e-12
assert (f"{kept:.1f}", f"{layer:.1f}", f"{logits:.1f}", f"{acts:.1f}") == ("8.6", "4.6", "4.2", "17.3")
room = card / 1e9 - acts
assert (f"{room / 8:.1f}", f"{room / 4:.1f}", f"{room / 6:.1f}") == ("7.8", "15.7", "10.4")
assert 8 * P7 / 1e9 < room and 6 * P10 / 1e9 < room  # 7B accumulates on the card; 10B with two buffers fits
assert 8 * P10 / 1e9 > room  # at 10 billion, accumulating on the card: the cell's "does NOT fit"
# the attention scores a fused kernel does not store: Korthikanti's 5 a s^2 b bytes for LLaMA 7B's 32 heads,
# a 2,048-token context and 16 sequences (32,768 tokens) add 10.7 GB, and 7B's accumulator would not fit
assert abs(scores - 5 * 32 * 2048**2 * (32_768 // 2048) / 1e9) < 1e-12  # the cell's
assert round(scores, 1) == 10.7 and 8 * P7 / 1e9 + acts + scores > card / 1e9
# the host at 10 billion with two buffers a side (6 bytes a parameter on the card fit beside the activations):
# Adam's 12 bytes, the fp32 sum's 4 and two fp16 buffers, 200 GB. The
# schedule's peak on the host is 2 where numpy's sum is the slowest stage, 1 where the device is: at most the 2 buffers
assert cases["overlapped, 2 buffers"] == (True, 2) and (12 + 4 + 2 * 2) * P10 / 1e9 == 200
held_10b = problem[P10][1]["overlapped, 2 buffers"]["held"]
assert held_10b["device"] == 2 and 1 <= held_10b["host"] <= 2, held_10b
# the cell's unfused attention scores: the accumulating design no longer fits (56 + 17.3 + 10.7 = 84 GB > 80)
assert f"{56 + acts + scores:.0f}" == "84" and 8 * P7 / 1e9 == 56
# "copying fits up to about 8.7 billion" with the unfused scores: 6 bytes a parameter beside 17.3 + 10.7 GB
assert f"{(card / 1e9 - acts - scores) / 6:.1f}" == "8.7" and 6 * P7 / 1e9 + acts + scores < card / 1e9
# both designs end with the fp16 weights' 2P-byte copy to the card, 0.22 s at 7B: the copying schedule's last copy,
# and in the card's "46.5 s" (46.3 without it); both leave out the host's Adam step
assert f"{2 * P7 / 64e9:.2f}" == "0.22" and round(problem[P7][0], 1) == 46.5
assert round(problem[P7][0] - 2 * P7 / 64e9, 1) == 46.3

# round 96: "two buffers a side hold 2G on the device, as much as the in-graph gradient and its accumulator: in float32
# overlap spends the saving, which only fp16 buffers against an fp32 accumulator (the problem) partly keep"
assert fast["overlapped, 2 buffers"]["held"]["device"] == 2 and 1.75 < peak[loop_name] < 3.2, (fast, peak)  # about two (2.03 stored; 2.55 once)
assert on_card["copy, two device buffers"] < on_card["accumulate on the card"]  # 6 < 8 bytes a parameter
# "f ... is the first kernel's": the largest variable is the 784 x 256 kernel
assert max(v.numpy().size for v in model.trainable_variables) == 784 * 256
assert abs(share * G - 784 * 256 * 4) < 1e-6

# round 108: the worked timeline, d, c, h = 3, 1, 2 ms, three micro-batches: 19 ms one after another, 15 with one
# buffer a side (N(d + c) + h + c), 13 with two (N d + c + h + c)
ex = {k: gl.lessons.host_schedule(3.0, 1.0, 2.0, 3, o, b)["total"] for k, (o, b) in cases.items()}
assert ex == {"one after another": 19.0, "overlapped, 1 buffer": 15.0, "overlapped, 2 buffers": 13.0}, ex
assert (schedule(3.0, 1.0, 2.0, 3, 1), schedule(3.0, 1.0, 2.0, 3, 2)) == (15.0, 13.0)
ex1 = gl.lessons.host_schedule(3.0, 1.0, 2.0, 3, True, 1)  # the table's starts and ends
assert [s_e[1:] for s_e in ex1["device"]] == [(0, 3), (4, 7), (8, 11)]
assert [s_e[1:] for s_e in ex1["bus"]] == [(3, 4), (7, 8), (11, 12), (14, 15)]
assert [s_e[1:] for s_e in ex1["host"]] == [(4, 6), (8, 10), (12, 14)]
ex2 = gl.lessons.host_schedule(3.0, 1.0, 2.0, 3, True, 2)  # "with k = 2 compute never waits (it ends at 3, 6, 9)"
assert [s_e[2] for s_e in ex2["device"]] == [3, 6, 9] and ex2["held"]["device"] == 2
# numpy's sum at 100M at the assumed rate, "400 ms": loose bands kept as a second guard
assert 100 < host_sum < 2000, host_sum
assert host_sum / copy > 2, (host_sum, copy)  # "400 ms", 5.8 times the copies
assert 10 < best / in_graph_ms <= serial / in_graph_ms < 200, (best, serial, in_graph_ms)
# the 7B verdict at the assumed rate: the device sets the pace (h = 2.80 s < d = 4.55 s), "48.7 s, against the card's
# 46.5 s"; at 10 billion "69.6 s". Below "30.8 GB/s" numpy's h exceeds d and numpy would set it
h7_assumed, d7_ = 5 * 4 * P7 / host_rate, 6 * P7 * 32_768 / achieved
assert f"{h7_assumed:.2f}" == "2.80" and h7_assumed < d7_
two7, two10 = (problem[P_x][1]["overlapped, 2 buffers"]["total"] for P_x in (P7, P10))
assert (f"{two7:.1f}", f"{two10:.1f}", f"{two7 / problem[P7][0]:.2f}") == ("48.7", "69.6", "1.05"), (two7, two10)
assert abs(pace_rate - 5 * 4 * P7 / d7_) < 1e-3 and f"{pace_rate / 1e9:.1f}" == "30.8"
assert f"{5 * 4 * P7 / 5.0 / 1e9:.0f}" == "28" and 5 * 4 * P7 / 5.0 < pace_rate  # the 5-s host sums below it
# the host at 10 billion, as printed: 20 bytes a parameter, 200 GB
assert host_bytes == 20 and round(host_bytes * P10 / 1e9) == 200
# the Problem: d, c, h as stated; "one summing in 5 s takes d + c + Nh + c = 55.0 s" (5 s > d: numpy sets the pace)
d7, c7 = 6 * P7 * 32_768 / achieved, 2 * P7 / 64e9
assert (f"{d7:.2f}", f"{c7:.2f}") == ("4.55", "0.22") and round(2 * P7 / 1e9) == 14 and 5.0 > d7
slow_host = gl.lessons.host_schedule(d7, c7, 5.0, N, True, 2)["total"]
assert abs(slow_host - (d7 + c7 + N * 5.0 + c7)) < 1e-9 and abs(slow_host - pb.slow_host) < 1e-9, slow_host
# "48.7 s" = N d + c + h + c where the device sets the pace (the assumed numpy's h below d: true on any machine)
h7 = 5 * 4 * P7 / host_rate
assert h7 < d7 and abs(problem[P7][1]["overlapped, 2 buffers"]["total"] - (N * d7 + c7 + h7 + c7)) < 1e-9
# the Problem's cell prints the 5-s host: "55.0 s" (no timing in it)
assert f"{slow_host:.1f}" == "55.0" and abs(slow_host - (d7 + c7 + N * 5.0 + c7)) < 1e-9
# this machine's numpy (printed beside the assumed rate): only its arithmetic is pinned, never which stage sets the pace
assert abs(h_here - 5 * 4 * P7 / sum_rate) < 1e-12
assert abs(here - (N * d7 + c7 + h_here + c7 if h_here < d7 else d7 + c7 + N * h_here + c7)) < 1e-6, (here, h_here)
# the Summary's and the Problem's numbers: a micro-batch's compute, copy and sum, 100M MLP in ms and 7B in s, as the cells print them
assert (f"{d:.2f}", f"{c:.2f}", f"{h:.0f}") == ("0.40", "6.25", "40")
assert (f"{d7:.2f}", f"{c7:.2f}", f"{h7:.2f}") == ("4.55", "0.22", "2.80")
assert lapped / in_graph_ms >= 7 and f"{4 * P / card:.1%}" == "0.5%"  # "at least 7 times", "0.5% of the card"
assert (f"{room / 6:.1f}", f"{room / 8:.1f}") == ("10.4", "7.8")  # "room for 10.4 billion parameters, not 7.8"
# round 141: the Problem's "46.5 s" is printed as its parts: compute + fp32 mean out + fp16 weights back + the card's sum
assert tuple(parts) == ("compute", "fp32 mean out", "fp16 weights back", "sum on the card")
assert abs(sum(parts.values()) - problem[P7][0]) < 1e-9 and f"{sum(parts.values()):.1f}" == "46.5"
assert [f"{v:.2f}" for v in parts.values()] == ["45.51", "0.44", "0.22", "0.35"], parts
print("lesson 20: every number the prose states checks out")
