"""Lesson 20's authors' checks: re-check every number the prose states, and each conclusion it draws
from a timing, against the names the notebook has just computed.

Run by the lesson's last code cell (`%run -i checks/20.py`), so nbval fails when a run disagrees
with the text. Not part of the lesson.
"""
from gradlab.studies.host_offload import offload_problem

# the model's assumptions: numpy on one core at beta_h = 21 GB/s (the host's bandwidth), "Arm's single-core streaming
# bandwidth on a Graviton2 (37 on a Graviton4)"; a host on all its cores at 150 GB/s (Problems 1 and 2; Problem 1: "Arm
# measures 157 on a Graviton2's, two reads to a write": its all-core 2:1 reads-writes peak bandwidth, the sum's mix)
arm = {"one core": (20.9, 37.0), "all cores, 2:1 reads-writes": (157.3, 430.1)}  # GB/s, Graviton2 and Graviton4 (Problems 1 and 2)
assert (F, bus, hbm, host_rate, fast_rate, multi_rate) == (0.40 * 756e12, 25e9, 2.0e12, 20.9e9, 150e9, 150e9)
assert (P, T_i) == (1e9, 4096) and host_rate / 1e9 == arm["one core"][0] and f"{host_rate / 1e9:.0f}" == "21" and multi_rate / 1e9 < min(arm["all cores, 2:1 reads-writes"])
assert [f"{v:.0f}" for v in arm["one core"] + arm["all cores, 2:1 reads-writes"]] == ["21", "37", "157", "430"]
# "Your machine" (folded): this machine's measured rate and the update at it are printed, nbval-ignored, not pinned
# (c12 quotes no number of this machine's: "The folded cell below times your numpy core: its rate, its multiple,
# its side of 75 GB/s"; the verdict follows the printed rate, and the pace is the slower of sum and copy)
assert pace.startswith("below") == (sum_rate < 3 * bus)
assert (stage_ms(P, T_i, sum_rate)[2] > tau_c) == (sum_rate < 3 * bus)  # below 75 GB/s the sum outlasts the copy
assert 0 < sum_rate and abs(mine - update_ms(tau_d, tau_c, stage_ms(P, T_i, sum_rate)[2], N)[1]) < 1e-9 * mine
# the folded "Your machine" cell also prints the update at Arm's Graviton4 core (37 GB/s): 4.2 times the card's
assert [f"{x:.1f}" for x in other_x] == ["4.2"], other_x
assert all(abs(x * on_card - (tau_d + tau_c + N * stage_ms(P, T_i, r)[2] + tau_c)) < 1e-9 * on_card
           for x, r in zip(other_x, (arm["one core"][1] * 1e9,)))
# "(a) The host's sum, 574 ms, longer than the copy's 160 ms and the compute's 81.3; ... 6 ms"; like for like with
# the card's sum: three passes over 4P bytes each (w_i in the loss on both sides), 12P
assert (f"{tau_d:.1f}", f"{tau_c:.0f}", f"{card_sum:.0f}", f"{tau_h:,.0f}") == ("81.3", "160", "6", "574")
assert abs(tau_h - 1e3 * 12 * P / host_rate) < 1e-9 * tau_h and abs(card_sum - 1e3 * 12 * P / hbm) < 1e-9
# (a) "the sum outlasts the copy on any host slower than three times the bus: 3 x 25 = 75 GB/s"; the Summary's
# "the sum is the slower stage on any host below three times the bus: 75 GB/s on PCIe 4.0. Arm's Graviton2 and Graviton4
# cores, 21 and 37 GB/s, are below it; the folded cell prints yours" (this machine's rate is printed, not pinned)
assert max(arm["one core"]) * 1e9 < 3 * bus
assert 3 * bus == 75e9 and abs(stage_ms(P, T_i, 3 * bus)[2] - tau_c) < 1e-9 * tau_c
assert stage_ms(P, T_i, 0.99 * 3 * bus)[2] > tau_c > stage_ms(P, T_i, 1.01 * 3 * bus)[2]
assert tau_h > tau_c > tau_d  # "numpy's sum ... sets the pace"
# "The card's own memory, 2.0 TB/s, is 80 times the bus"
assert round(hbm / bus) == 80
# (b) "8,064 tokens (the copy)"; the sum's bar "12F/(6 beta_h) = 28,938 tokens" (the Summary gives both as formulas, "8,064 here" and "28,938 at one core's 21 GB/s");
# P cancels
assert f"{T_copy:,.0f}" == "8,064" and f"{T_sum:,.0f}" == "28,938" and abs(T_sum - 12 * F / (6 * host_rate)) < 1e-9 * T_sum
for P_x in (1e8, 7e9):
    d_x = 6 * P_x * T_copy / F
    assert abs(d_x - 4 * P_x / bus) < 1e-9 * d_x and abs(6 * P_x * T_sum / F - 12 * P_x / host_rate) < 1e-9 * d_x
# Predict (b): "The copy's bar halves, to 4,032 tokens; numpy's stays" on PCIe 5.0, twice the bus's rate
assert f"{4 * F / (6 * 2 * bus):,.0f}" == "4,032" and 4 * F / (6 * 2 * bus) < T_sum
# the sum's bar, 12F/(6 beta_h), falls in inverse proportion to beta_h: the bar scales as 1 / rate
assert abs(12 * F / (6 * host_rate / 2) - 2 * T_sum) < 1e-6 * T_sum

# the learner's update_ms (or the solution) against host_schedule, within the cell's check
assert all(np.allclose(update_ms(*args), simulated(*args), rtol=1e-12) for args in cases)
sched = {o: gl.lessons.host_schedule(tau_d, tau_c, tau_h, N, overlap=o, buffers=2) for o in (False, True)}
assert abs(one_after_another - sched[False]["total"]) < 1e-9 and abs(overlapped - sched[True]["total"]) < 1e-9
# "(c) ... overlapped, an update takes tau_d + tau_c + N tau_h + tau_c"; "At a Graviton2 core's 21 GB/s, one after
# another takes 9.5 times the card's 873 ms (the dotted line), 13.9 as 03 wrote `host_step`; overlapped, 6,143 ms, 7.0 times"
assert abs(overlapped - (tau_d + tau_c + N * tau_h + tau_c)) < 1e-9 * overlapped and f"{on_card:.0f}" == "873"
assert (f"{overlapped:,.0f}", f"{overlapped / on_card:.1f}", f"{one_after_another / on_card:.1f}") == ("6,143", "7.0", "9.5")
# c12: "Overlapped, with the sum slowest (here), an update takes tau_d + tau_c + N tau_h + tau_c": the host's sum is the
# slowest stage, so the pipeline waits on it
assert tau_h > max(tau_d, tau_c), (tau_d, tau_c, tau_h)
# "The device (blue) computes 813 ms in ten blocks, idle 5,330 ms, 87% of the update"
assert (f"{overlapped - N * tau_d:,.0f}", f"{1 - N * tau_d / overlapped:.0%}") == ("5,330", "87%")
# "Chlebus's list takes at least 9.7 times: `np.stack` reads and writes every fetch, `.mean` reads them again, 3N + 1
# passes over 4P or more, all after the last copy" (c0: he kept all N fetches in a list and averaged them with
# np.stack(...).mean(axis=0) at the N-th step; the seed's `self._gradients.append(grads)`): fetched one after another
# (session.run blocks), no sum until the last fetch; a lower bound, as .mean may pass over its output more than once
assert abs(stack_mean - 1e3 * (2 * N + N + 1) * 4 * P / host_rate) < 1e-9 * stack_mean
assert abs(as_chlebus - (N * (tau_d + tau_c) + stack_mean + tau_c)) < 1e-9 * as_chlebus
assert f"{as_chlebus / on_card:.1f}" == "9.7" and as_chlebus > one_after_another > overlapped
# c14: "Keep `tape.gradient` outside that scope, or the backward pass runs on the host too (the second cell below
# shows both)": in host_accumulate's graph only the N x 4 assign_adds ask for the CPU; no gradient op does
placed = host_accumulate.get_concrete_function(xs, ys).graph.get_operations()
assert {op.type for op in placed if "CPU" in op.device} == {"AssignAddVariableOp"}, {op.type for op in placed if "CPU" in op.device}
assert sum(op.type == "AssignAddVariableOp" for op in placed) == N * len(host_total)
assert not any("CPU" in op.device for op in placed if "gradient" in op.name.lower())
assert sum("gradient" in op.name.lower() for op in placed) > 0
# the cell after it prints both placements: outside, only the sums; tape.gradient inside the scope, the backward pass's
# ops (MatMul, ReluGrad, BiasAddGrad, ...) are placed on the host too
assert on_host(host_accumulate) == ["AssignAddVariableOp"], on_host(host_accumulate)
assert {"AssignAddVariableOp", "MatMul", "ReluGrad", "BiasAddGrad"} <= set(on_host(host_backward)), on_host(host_backward)
# "13.9 as 03 wrote `host_step`" (c3: "scales each fetch by n_i first"): its in-place n_i g_i reads and writes the gradient once
# more, 5 passes a sum instead of 3, one after another
assert abs(as_written - (N * (tau_d + tau_c + 5 / 3 * tau_h) + tau_c)) < 1e-9 * as_written
assert f"{as_written / on_card:.1f}" == "13.9" and as_written > one_after_another
# "The sums scale as 1/beta_h" and fill nearly all of the update; a faster core (Graviton4, pinned above) lowers the multiple
assert N * tau_h / overlapped > 0.9 and overlapped / on_card > max(other_x)
# the figure's titles print the prose's digits (digits=3): "8,314" one after another, "6,143" overlapped, "813" busy
assert [ax.get_title().split("\n")[0].split(": ", 1)[1] for ax in fig.axes] == [
    "8,314 ms, the device busy 813 ms", "6,143 ms, the device busy 813 ms", "6,143 ms, the device busy 813 ms"]
# "A design that may overlap, in TensorFlow (not measured here)", at toy size below: its host sum lands 1.5 spacings from the large batch's
# gradient": one tf.function over N micro-batches, the accumulator placed on the CPU
assert all(t.device.endswith("CPU:0") for t in host_total) and len(host_total) == len(toy.trainable_variables)
assert gl.lessons.verdict(flat(host_total), flat(large)) == "exact: 1.5 spacings", gl.lessons.verdict(flat(host_total), flat(large))
assert xs.shape == (N, 32, 8) and ys.shape == (N, 32, 1)
# "Why copy out at all? ... long micro-batches hide the copy and the sum (Problem 1)" (its numbers are pinned with
# Problem 1 below, and stated only in its answer)
# "The sums scale as 1/beta_h" (c2 and c12): tau_h scales as 1 / rate; the update does only while the sum outlasts the
# copy (Problem 2: past 75 GB/s the bus sets the pace)
# "three passes over 4P bytes ... the host only adds. (03's host_step scales each fetch by n_i first: two passes
# more.)": tau_h prices 3 passes of 4P
assert abs(tau_h - 1e3 * 3 * 4 * P / host_rate) < 1e-9 * tau_h
assert abs(stage_ms(P, T_i, 2 * host_rate)[2] - tau_h / 2) < 1e-9 * tau_h
assert all(designs[k][1] == v for k, v in (("accumulating on the card", on_card), ("copying out, one after another",
           one_after_another), ("copying out, overlapped, 2 device buffers", overlapped)))
# c7/c9/c12: the third schedule, one device buffer, written by the learner (update_ms's third value) and checked against
# host_schedule's: "the device and the bus take turns, N(tau_d + tau_c) + tau_h + tau_c, unless the sum is slower, as
# here: 6,143 ms too"
assert designs["copying out, overlapped, 1 device buffer"][1] == one_buffer and abs(one_buffer - lean["total"]) < 1e-9 * one_buffer
assert N * (tau_d + tau_c) + tau_h < tau_d + tau_c + N * tau_h and f"{one_buffer:,.0f}" == "6,143"
assert abs(update_ms(d7, c7, h7, N)[2] - (N * (d7 + c7) + h7 + c7)) < 1e-9  # Problem 1: the turns set the pace
# c2: "40% of its 756 TFLOP/s dense bfloat16 peak (the datasheet's 1,513 counts sparsity), 05's share, from Llama 3's
# 38-43% on H100s"
assert F == 0.40 * 756e12 and abs(1513 / 2 - 756) < 1 and 0.38 <= 0.40 <= 0.43
# "The device (blue) computes for 813 ms in ten blocks" (N = 10 of tau_d; overlapped, "the first two run
# back to back": host_schedule starts the second at the first's end); the figure draws these two schedules
assert f"{N * tau_d:.0f}" == "813" and np.allclose(totals_drawn, (one_after_another, overlapped, overlapped),
                                                  rtol=1e-12), totals_drawn
for o in (False, True):
    assert abs(sum(e - s for _, s, e in sched[o]["device"]) - N * tau_d) < 1e-9
# the table's "held on the device": the card, a gradient and an accumulator (8P); one gradient on the device one after
# another (4P), two overlapped (8P), one with one buffer (4P): 4P bytes each, float32
assert sched[False]["held"]["device"] == 1 and sched[True]["held"]["device"] == 2, sched
assert [designs[k][0] for k in designs] == ["8P", f"{4 * sched[False]['held']['device']}P",
                                            f"{4 * sched[True]['held']['device']}P", f"{4 * lean['held']['device']}P"]
# "Copying out needs one gradient buffer there, 4P. Here the sum sets the pace, so one buffer takes as long as two
# (6,143 ms, the figure's last two panels); Problem 1 shows where one costs more": the lowest panel (two
# on the host); Problem 1's lean7 > copy7 is pinned with Problem 1
assert lean["held"] == {"device": 1, "host": 2} and abs(lean["total"] - overlapped) < 1e-9, lean
# "8P bytes (8 GB, a tenth of the H100's 80 GB)"; the figure's dotted line is the card's 873 ms
assert abs(fig.axes[0].get_lines()[-1].get_xdata()[0] - on_card) < 1e-9
# the legend names the dashed black line (each panel's end) and the dotted card
assert [t.get_text() for t in fig.legends[0].get_texts()][-2:] == [
    "the update's end, in each panel", f"accumulating on the device instead: {on_card:,.0f} ms"]
assert 8 * P / 1e9 == 8 and 8 * P / 80e9 == 0.1

# Problem 1: recomputed, 8P FLOPs a token (its fold "Why every layer is recomputed": "a layer keeps (34 + 5 n_h T/h) Th
# bytes, 1,314 Th here (n_h = 32 heads, T = 32,768, h = 4,096; 12's 194 Th is at T = 4,096). Without attention's
# scores, 34 Th: 146 GB over 32 layers, still above the card's 80": pb.whole, named for the layer kept apart from its
# scores; with recomputation the accumulating design fits 7B beside them);
# the host's sum moves 10P bytes ("70 GB, 10P bytes") at 150 GB/s; both designs send 16-bit gradients
pb = offload_problem(card=80e9, micro_batches=N, flops=F, host_rate=multi_rate, bus=bus, hbm=hbm, tokens=T7,
                     flops_per_token=8, sum_bytes=10, mean_bytes=2)
assert f"{pb.whole:.0f}" == "146" and pb.whole > 80 and pb.fits["accumulate on the card"] > 7, (pb.whole, pb.fits)
assert pb.whole == 34 * T7 * 4096 * 32 / 1e9 and (pb.width, pb.layers) == (4096, 32)
korthikanti = lambda T, heads=32: 34 + 5 * heads * T / pb.width  # bytes a layer per T h, Korthikanti et al. (12's Problem 3)
assert f"{korthikanti(pb.tokens):,.0f}" == "1,314" and pb.tokens == T7 and f"{korthikanti(4096):.0f}" == "194"
assert abs(pb.whole - korthikanti(pb.tokens, heads=0) * pb.tokens * pb.width * pb.layers / 1e9) < 1e-9
assert (f"{d7:.2f}", f"{c7:.2f}", f"{h7:.2f}") == ("6.07", "0.56", "0.47") and 2 * 7e9 / 1e9 == 14 and 10 * 7e9 / 1e9 == 70
assert abs(d7 - 8 * 7e9 * T7 / F) < 1e-12 and h7 < d7  # the device sets the pace
# "62.2 s" on the card, "62.3 s" copying, "0.2% more" (Problem 1's answer; c14 and the Summary name Problem 1 only)
assert (f"{card7:.1f}", f"{copy7:.1f}", f"{copy7 / card7 - 1:.1%}") == ("62.2", "62.3", "0.2%")
assert abs(copy7 - (N * d7 + c7 + h7 + c7)) < 1e-9  # the answer's formula
# "That schedule holds two bfloat16 gradients on the card, 4P = 28 GB, against the card design's gradient and float32
# accumulator, 6P = 42 GB: it saves 14 GB. Saving 28 GB takes one buffer, and the device waits for each copy: 67.3 s,
# 8% more" (the Summary: "two gradient buffers there save 14 GB at +0.2%; one saves 28 GB at +8%"); the card's sums
# read and write 10P a micro-batch: the 2P gradient read, the 4P sum read and written
assert pb.problem[7e9][1]["overlapped, 2 buffers"]["held"]["device"] == 2
assert (4 * 7e9 / 1e9, 6 * 7e9 / 1e9, (6 - 4) * 7e9 / 1e9, (6 - 2) * 7e9 / 1e9) == (28, 42, 14, 28)
assert (f"{lean7:.1f}", f"{lean7 / card7 - 1:.0%}") == ("67.3", "8%") and abs(lean7 - (N * (d7 + c7) + h7 + c7)) < 1e-9
assert abs(pb.problem[7e9][1]["overlapped, 1 buffer"]["total"] - lean7) < 1e-9 and lean7 > copy7
assert 4 * 7e9 / 1e9 == 28 and abs(card7 - (N * d7 + N * (2 + 4 + 4) * 7e9 / hbm + 2 * 2 * 7e9 / bus)) < 1e-9
# "One core at 21 GB/s changes little: tau_h = 3.35 s stays under tau_d ... 65.2 s, 5% more"; "Below 10P/tau_d =
# 11.5 GB/s the sum would set the pace"
assert (f"{h7_core:.2f}", f"{copy7_core:.1f}", f"{copy7_core / card7 - 1:.0%}") == ("3.35", "65.2", "5%")
assert h7_core < d7 and abs(copy7_core - (N * d7 + c7 + h7_core + c7)) < 1e-9
assert f"{10 * 7e9 / d7 / 1e9:.1f}" == "11.5" and T7 == 32_768 and 10 * 7e9 / d7 < host_rate < multi_rate
assert problem_s(7e9, 0.99 * 10 * 7e9 / d7)[2] > d7
# the same answers from gradlab's model of the Problem (its own tests: tests/studies/test_host_offload.py)
assert abs(pb.problem[7e9][0] - card7) < 1e-9 and np.allclose(pb.micro[7e9], (d7, c7, h7), rtol=1e-12, atol=0)
assert abs(pb.problem[7e9][1]["overlapped, 2 buffers"]["total"] - copy7) < 1e-9
# Problem 2: a host on all its cores at 150 GB/s, the 1B model at T = 4,096: "The bus: tau_h = 12P/(150 GB/s) = 80 ms,
# half the copy's 160", "tau_d + N tau_c + tau_h + tau_c = 1,921 ms, 2.2 times the card's (one after another, 3.9)",
# "(b) Above 4,032 tokens; the copy's bar, 8,064, is the higher" (the answer only; assumption 3 says "Problems 1 and 2 give the host all its cores")
assert f"{tau_h_all:,.0f}" == "80" and abs(2 * tau_h_all - tau_c) < 1e-9 and tau_d < tau_c
assert (f"{overlapped_all:,.0f}", f"{overlapped_all / on_card:.1f}", f"{one_after_all / on_card:.1f}") == ("1,921", "2.2", "3.9")
assert abs(overlapped_all - (tau_d + N * tau_c + tau_h_all + tau_c)) < 1e-9
assert f"{12 * F / (6 * fast_rate):,.0f}" == "4,032" and 12 * F / (6 * fast_rate) < T_copy
# "a faster bus does more: on PCIe 5.0 (the copy 80 ms) compute sets the pace: 1,053 ms, 1.2 times"
assert (f"{tau_c / 2:.0f}", f"{gen5:,.0f}", f"{gen5 / on_card:.1f}") == ("80", "1,053", "1.2")
assert tau_d > max(tau_c / 2, tau_h_all) and abs(gen5 - (tau_d + tau_c / 2 + tau_h_all + (N - 1) * tau_d + tau_c / 2)) < 1e-9
# Problem 1: "at 150 GB/s (Arm measures 157 on a Graviton2's, two reads to a write)"
assert f"{arm['all cores, 2:1 reads-writes'][0]:.0f}" == "157"
# "Past 75 GB/s a faster host shortens only the last sum": a host with no sum at all saves tau_h_all, no more
assert abs(overlapped_all - update_ms(tau_d, tau_c, 0.0, N)[1] - tau_h_all) < 1e-9
# the Predicts: (a) the host's sum is slowest; (c) the sums fill most of the update
assert max(tau_d, tau_c, tau_h) == tau_h and N * tau_h > overlapped / 2
print("lesson 20: every number the prose states checks out")
