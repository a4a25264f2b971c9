"""The authors' checks of lesson 23 (23-planning-a-run.ipynb), not part of the lesson.

Run by the lesson's last cell with `%run -i`, over the notebook's names: it re-checks every number the
prose states against the run the notebook just made, and fails loudly where a run disagrees with the
text. The GPT's numbers are arithmetic, pinned exactly; the CPU's memory readings move between runs on a
shared machine, so only their conclusions are pinned (under or over the limit), with a margin."""
import numpy as np

# Step 1: 11's Problem 4 GPT (P = 1e9, float32, Adam, T = 2,048, v = 51,200) with B = 1,024 on 8 H100s: 128 sequences
# a GPU in 79.6 GiB (nvidia-smi's 81,559 MiB); five fixed terms 18.6 GiB (P s = 3.73), a sequence 2.91 GiB; 20 fit;
# N = 8, b = 16, 65.1 GiB; four of 32 would hold 111.6 GiB; "the fixed terms take under a quarter of the card"
assert (P, s, T, h, d, v, R, B, B_gpu) == (10**9, 4, 2048, 2048, 16, 51_200, 8, 1024, 128)
assert f"{(12 * d * h**2 + v * h) / 1e9:.2f}" == "0.91"  # "($12dh^2 + vh$ = 0.91B, rounded up)": P = 1e9 rounds up
assert f"{card / GiB:.1f}" == "79.6" and f"{fixed / GiB:.1f}" == "18.6" and f"{P * s / GiB:.2f}" == "3.73"
assert fixed < card / 4 and f"{per_row / GiB:.2f}" == "2.91" and int((card - fixed) // per_row) == 20
assert plan in (my_plan, solution_plan) and (N, b) == (8, 16) and solution_plan(B_gpu, card, fixed, per_row) == (8, 16)
_tot = {n: memory_budget.budget(P, "adam", B=B_gpu, N=n, **rows)["total"] / GiB for n in (4, 8)}
assert [f"{_tot[n]:.1f}" for n in (4, 8)] == ["111.6", "65.1"] and abs(_tot[8] - (fixed + b * per_row) / GiB) < 1e-9
# the figure: the same budget at N = 4, 8, 16, 32 (b = 32, 16, 8, 4), the plan's N = 8 marked; "the grey fixed terms"
assert list(drawn) == [4, 8, 16, 32] and all(drawn[n] == _tot[n] for n in (4, 8)) and N in drawn
assert all(abs(drawn[n] - (fixed + B_gpu // n * per_row) / GiB) < 1e-9 for n in drawn)
assert drawn[4] > card / GiB > drawn[8] > drawn[16] > drawn[32]  # N = 8 the fewest that fits
# the five terms in the prose: weights, gradients, 2 Adam slots, accumulator (P s each), the ids (4 T bytes a sequence)
assert fixed == 5 * P * s + B_gpu * 4 * T and per_row == 34 * T * h * d + 8 * T * v
# attention's scores left out: 5 n_h T^2 bytes a layer (Korthikanti et al.); kept, with 16 heads (Step 1's last line), 5.0 GiB
# a sequence, and the plan becomes 32 micro-batches of 4
_scores = d * 5 * 16 * T**2
assert f"{_scores / GiB:.1f}" == "5.0" and solution_plan(B_gpu, card, fixed, per_row + _scores) == (32, 4)
# Step 1's printed second plan, the Answer and the Summary's second row: "Storing the scores (Keras on TensorFlow):
# 32 x 4, 50.3 GiB"; the same fixed terms, 4 sequences with their scores (16 x 8 would hold 81.9, over the card)
assert scores == _scores and (N_tf, b_tf) == (32, 4) and f"{tf_total / GiB:.1f}" == "50.3", (N_tf, b_tf, tf_total)
assert abs(tf_total - (fixed + 4 * (per_row + _scores))) < 1e-6 * tf_total and fixed + 8 * (per_row + _scores) > card

# Step 2: float32 gradients (4 P bytes) in a ring over NVLink at 450 GB/s: 15.6 ms; compute 6 P tokens at 40% of
# 989 TFLOP/s: 3.98 s for 262,144 tokens; 0.4% of the update at any N; balance at 1,026 tokens a GPU; 14: 16,384 tokens
assert T_gpu == 262_144 and f"{compute:.2f}" == "3.98" and f"{1e3 * ring:.1f}" == "15.6" and f"{share:.1%}" == "0.4%"
# "NCCL achieves less than a link's peak; at half of it the share is 0.8%" (r4: achieved, not peak, bandwidth)
assert f"{ring_half / (compute + ring_half):.1%}" == "0.8%" and abs(ring_half - 2 * ring) < 1e-12
assert abs(ring - 2 * (R - 1) / R * 4 * P / 450e9) < 1e-15 and f"{ring / per_token:,.0f}" == "1,026"
# c9: "2 · 7/8 · 4 GB / 450 GB/s = 15.6 ms" (P = 1e9, R = 8; NVLink 4 each way, README)
assert R == 8 and P == 1e9 and f"{2 * 7 / 8 * 4e9 / 450e9 * 1e3:.1f}" == "15.6"
# "(14's 1,282, for 16-bit gradients at the full peak, x 2 x 0.4)": float32 doubles the bytes and 40% of the peak makes
# each token 2.5 times slower: 1,282 x 2 x 0.4 = 1,026 (and the print's "14's Problem 2, in float32 at 40%"); 14's own
# playground: grad_bytes = 2, efficiency = 1.0
assert 1 / 0.4 == 2.5 and f"{1282 * 0.4 * 2:,.0f}" == "1,026" and f"{2 * (R - 1) / R * 2 * P / 450e9 * 989e12 / (6 * P):,.0f}" == "1,282"
assert 8 * 2048 == 16_384  # 14's T_dev: 8 sequences of 2,048 tokens

# "That needs a whole gradient on every GPU; shard it (ZeRO-2 or 3) and every micro-batch communicates (Problem 2)":
# see the Problems below (zero2, zero3)

# Step 3 (r226: the range is handed to the learner; its derivation is folded): "At this run's final loss, 2.47 to 2.85
# nats, B_crit lies between 666 and 1,325 sequences (1.4M to 2.7M tokens)". The fold: Kaplan et al.'s fits (B* = 2e8
# tokens, alpha_B = 0.21, eq. 1.4), on the parameters outside the embeddings, 12 d h^2 = 0.81B. Their L(N, D), eq. 1.5
# (N_c = 8.8e13, alpha_N = 0.076, D_c = 5.4e13 tokens, alpha_D = 0.095), at the run's 20B tokens: 2.47 nats, B_crit =
# 1,325 sequences, B / B_crit = 0.77. Their L(N, S), eq. 1.6 (N_c = 6.5e13, alpha_N = 0.077, S_c = 2.1e3, alpha_S =
# 0.76) after the run's 9,537 updates, with S_min = S / (1 + B_crit / B) (eq. 5.4) at its own loss: 2.85 nats, 666
# sequences, 1.54. The Predict's answer: "About 2: 1.77 to 2.54 times the fewest examples, and 1.65 to 2.29 times the fewest
# updates ... B / B_crit is 0.77 to 1.54 ... B = 512 would spend ... 1.39 to 1.77 times the fewest, but take 2.30 to
# 3.59 times the fewest updates"
assert [f"{c * T / 1e6:.1f}" for c in (B_crit_S, B_crit)] == ["1.4", "2.7"]  # "(1.4M to 2.7M tokens)"
assert crit_of(L) == B_crit and crit_of(L_S) == B_crit_S  # the fold's function, the range's two ends
assert [f"{1 + c / B:.2f}" for c in (B_crit_S, B_crit)] == ["1.65", "2.29"]
assert [f"{1 + 512 / c:.2f}" for c in (B_crit_S, B_crit)] == ["1.77", "1.39"]
assert [f"{1 + c / 512:.2f}" for c in (B_crit_S, B_crit)] == ["2.30", "3.59"]
assert 1.5 < 1 + B / B_crit < 1 + B / B_crit_S < 3  # "About 2" (of the Predict's 1.1, 2 or over 4)
assert P_ne == 12 * d * h**2 and f"{P_ne / 1e9:.2f}" == "0.81" and tokens == 20e9 and updates == 9_537
assert abs(L - ((8.8e13 / P_ne) ** (0.076 / 0.095) + 5.4e13 / tokens) ** 0.095) < 1e-12
assert f"{L:.2f}" == "2.47" and f"{B_crit:,.0f}" == "1,325" and f"{B / B_crit:.2f}" == "0.77" and 0.5 < B / B_crit < 1
_S_min = updates / (1 + 2e8 / L_S ** (1 / 0.21) / (B * T))  # the fixed point: L_S is L(N, S) at its own S_min
assert abs(L_S - ((6.5e13 / P_ne) ** 0.077 + (2.1e3 / _S_min) ** 0.76)) < 1e-9 and L < L_S
assert f"{L_S:.2f}" == "2.85" and f"{B_crit_S:,.0f}" == "666" and f"{B / B_crit_S:.2f}" == "1.54" and B / B_crit_S > 1
assert abs(B_crit_S - 2e8 / L_S ** (1 / 0.21) / T) < 1e-9
_se = {x: (f"{1 + B_crit / x:.2f}", f"{1 + x / B_crit:.2f}") for x in (512, 1024, 2048)}
assert _se[1024] == ("2.29", "1.77") and _se[512][0] == "3.59" and _se[2048][1] == "2.55", _se
# the answer's upper ends at B = 1,024: S/S_min 2.29 (at 1,325) and E/E_min 2.54 (at 666)
assert max(1 + B_crit / B, 1 + B_crit_S / B) == 1 + B_crit / B and f"{1 + B / B_crit_S:.2f}" == "2.54"
assert max(1 + B / B_crit, 1 + B / B_crit_S) == 1 + B / B_crit_S
# "B_crit falls as L^(-1/0.21), and (2.85/2.47)^(1/0.21) = 2.0, so it halves, to 666 sequences" (from 1,325)
assert 1.8 < B_crit / B_crit_S < 2.2 and (f"{L_S:.2f}", f"{L:.2f}") == ("2.85", "2.47")
assert f"{(L_S / L) ** (1 / 0.21):.1f}" == "2.0" and f"{B_crit / B_crit_S:.1f}" == "2.0"
assert abs(B_crit / B_crit_S - (L_S / L) ** (1 / 0.21)) < 1e-9
# "iterated to agreement (the folded cell)": the fixed point above holds (L_S is L(N, S) at the S_min its own B_crit
# gives); "the range spans 2x" (1,325 / 666)
# the run's length: 20B tokens, 20 a parameter (Hoffmann et al.); 9,537 updates of 2,097,152 tokens at 4.26 s (compute
# with attention's 6 d T h FLOPs a token, 6.7% beside 6 P, then the all-reduce): 11.3 h on the 8 GPUs, 90 GPU-hours (the
# Summary's plan table too, beside N x b = 8 x 16, B = 1,024, 65.1 of 79.6 GiB, 0.4% and 0.77), 85 at 6 P a token alone
assert tokens / P == 20 and B * T == 2_097_152 and updates == 9_537 and (updates - 1) * B * T < tokens <= updates * B * T
assert f"{attention:.1%}" == "6.7%" and abs(attention - d * T * h / P) < 1e-15
assert abs(step - (compute * (1 + attention) + ring)) < 1e-12 and f"{step:.2f}" == "4.26"
assert f"{hours:.1f}" == "11.3" and f"{R * hours:.0f}" == "90" and f"{R * updates * (compute + ring) / 3600:.0f}" == "85"
# "Every row reaches the loss B = 1,024 reaches after 20B tokens": S_at keeps the 1,024 run's S_min; B = 512 takes
# 13,296 to 14,916 updates (the table) x 512 x 2,048 tokens = 13.9 to 15.6B; B = 2,048, 7,658 to 6,847 = 32.1 to 28.7B
assert [f"{S_at(c, Bn) * Bn * T / 1e9:.1f}" for Bn in (512, 2048) for c in (B_crit_S, B_crit)] == [
    "13.9", "15.6", "32.1", "28.7"]  # the table's tokens column (r4)
# "On fixed GPUs the wall time follows the examples ... Halving B to 512 (N = 4 of 16 a GPU) ... the run from 11.3 to
# 8.9 h (7.9 h at 666): 63 to 71 GPU-hours instead of 90" (the cell prints a table, each plan at each end): each end's
# S_min from the run's 9,537 updates at B = 1,024 (S = S_min (1 + B_crit / B), eq. 5.4), then S at B = 512; an update
# of 512 sequences computes half the tokens a GPU (attention's share too), and all-reduces the same bytes
_half = {}
for _crit in (B_crit, B_crit_S):
    _S512 = updates / (1 + _crit / B) * (1 + _crit / 512)
    _half[_crit] = (_S512 / updates, R * _S512 * (compute / 2 * (1 + attention) + ring) / 3600)
assert [f"{u:.1f}" for u, _ in _half.values()] == ["1.6", "1.4"], _half
assert [f"{g:.0f}" for _, g in _half.values()] == ["71", "63"] and all(g < R * hours for _, g in _half.values()), _half
assert abs(step512 - (compute / 2 * (1 + attention) + ring)) < 1e-12  # the printed B = 512 lines
# (printed, not in the prose: r212 asked for the wall time) B = 512 on the same 8 GPUs is also shorter: under 11.3 h
assert all(g / R < hours for _, g in _half.values()), _half
# "By both, B = 512 ... would be cheaper and faster: 7.9 to 8.9 h and 63 to 71 GPU-hours against 11.3 h and 90" (the wall time on
# the same 8 GPUs, as the cell prints it)
assert [f"{g / R:.1f}" for _, g in _half.values()] == ["8.9", "7.9"], _half
# "cuts the examples from 1.77 to 1.39 times the fewest at B_crit = 1,325, and the run from 11.3 to 8.9 h" (E/E_min in
# Step 3's table; the wall time follows the examples: the two ratios agree within 1%)
assert (_se[512][1], _se[1024][1]) == ("1.39", "1.77") and abs((1 + 512 / B_crit) / (1 + B / B_crit) - _half[B_crit][1] / R / hours) < 0.01
assert ring / (compute / 2 + ring) < 0.01 and 512 // (R * b) == 4 and b == 16  # N = 4; the all-reduce, under 1%, barely counts
# c17 (r2): "More GPUs pay at the same batch, not a larger one. B = 1,024 on 16 GPUs (two nodes, InfiniBand NDR at 50 GB/s
# a GPU) halves each GPU's compute: 6.0 h, 96 GPU-hours against 90. Doubling B with the GPUs wastes them: 8.4 to 9.3 h,
# 134 to 149 GPU-hours, since past B_crit the extra examples buy few updates" (and the Summary's "Sixteen GPUs at the
# same B: 6.0 h, 96 GPU-hours; doubling B with them, 134 to 149"); S at B = 2,048 from each end's S_min
# c17: "Both rows assume one flat ring at InfiniBand NDR's 50 GB/s a GPU: 2 · 15/16 · 4 GB / 50 GB/s = 150 ms (printed)"
assert abs(ring16 - 2 * 15 / 16 * 4 * P / 50e9) < 1e-12 and f"{1e3 * ring16:.0f}" == "150"
assert f"{2 * 15 / 16 * 4e9 / 50e9 * 1e3:.0f}" == "150"
assert 2048 // 16 == B_gpu == R * b and abs(step16 - step) / step < 0.05  # B = 2,048: the same 8 x 16 a GPU
assert abs(step16 - compute * (1 + attention) - ring16) < 1e-12
assert abs(step16_same - (compute / 2 * (1 + attention) + ring16)) < 1e-12 and 1024 // 16 == 4 * b  # 4 x 16 a GPU
_same = updates * step16_same / 3600  # the same B: the same 9,537 updates at both ends
assert f"{_same:.1f}" == "6.0" and f"{16 * _same:.0f}" == "96" and f"{R * hours:.0f}" == "90", _same
assert [f"{S_at(c, 1024) * step16_same / 3600:.1f}" for c in (B_crit, B_crit_S)] == ["6.0", "6.0"]
_s16 = {c: updates / (1 + c / B) * (1 + c / 2048) for c in (B_crit, B_crit_S)}
assert [f"{u * step16 / 3600:.1f}" for u in _s16.values()] == ["8.4", "9.3"], _s16
assert [f"{16 * u * step16 / 3600:.0f}" for u in _s16.values()] == ["134", "149"], _s16
# the same B on 16 GPUs: the fastest row at either end, near the plan's GPU-hours; 2,048 the costliest
_rows = {c: {k: S_at(c, Bn) * sec / 3600 for k, (g, sec, Bn) in plans.items()} for c in (B_crit, B_crit_S)}
assert all(min(r, key=r.get) == "B = 1,024 on 16 GPUs" for r in _rows.values()), _rows
assert all(16 * _same < 1.1 * R * hours < 16 * u * step16 / 3600 for u in _s16.values())
# "past B_crit": B = 2,048 is above both ends of the range
assert 2048 > B_crit > B_crit_S
# the printed table: its rows are these plans (B = 1,024 the run itself, 11.3 h at both ends)
assert list(plans.values()) == [(R, step, 1024), (R, step512, 512), (16, step16, 2048), (16, step16_same, 1024)]
assert all(abs(S_at(c, 1024) - updates) < 1e-9 for c in (B_crit, B_crit_S))
assert [f"{S_at(c, 512) * step512 / 3600:.1f}" for c in (B_crit, B_crit_S)] == ["8.9", "7.9"]
assert [f"{S_at(c, 2048) * step16 / 3600:.1f}" for c in (B_crit, B_crit_S)] == ["8.4", "9.3"]

# the CPU check: 11's MLP (its a_out, t, a_in), under 24 MiB: N = 4, b = 256, budget 22.04 MiB; "measured peak plus
# its weights and batch (computed)" (measured = held + peak: the peak measured, held = 4P + the batch computed), the fused
# loop under the limit and plain (N = 1) over it (the Answer: 20.0 MiB and 35.7 on the stored run, "over")
assert (by_row["activation_bytes_per_row"], by_row["backward_bytes_per_row"], P_mlp) == (18_984, 4_608, 1_154_954)
assert (N_mlp, b_mlp) == (4, 256), (N_mlp, b_mlp)
assert f"{memory_budget.budget(P_mlp, 'sgd', B=1024, N=4, **by_row)['total'] / MiB:.2f}" == "22.04"
# no floor of 30 for plain: its update added 25.2-29.0 MiB in 23's runs, 23.50 in 12's table (30.97 measured)
assert measured[4] <= 24 < measured[1], measured
assert all(measured[n] == held + peak[n] for n in nets) and held == (4 * P_mlp + 1024 * 4 * 784) / MiB
# (an earlier prose's "Plain reads near its budget here and a few MiB under it in 11's table"): the same update (block_trainer, N = 1) on
# the same rows (default_rng(1)); the prose now says only "over", so near its budget within a third of what the
# update adds (27.44 MiB), not 11's fifth: a fifth's floor, 21.95 added, sits 1.5 MiB under 12's 23.50
_plain_budget = memory_budget.budget(P_mlp, "sgd", B=1024, N=1, **by_row)["total"] / MiB
assert f"{_plain_budget:.2f}" == "34.91" and abs(measured[1] - _plain_budget) < (_plain_budget - held) / 3, measured
# "This plan stayed under its budget" (runs:
# 19.5, 18.8, 19.2, 19.4 of 22.04 MiB);
# "The GPT's plan leaves 14.5 GiB" (79.6 - 65.1)
assert measured[4] < memory_budget.budget(P_mlp, "sgd", B=1024, N=4, **by_row)["total"] / MiB, measured
assert f"{(card - memory_budget.budget(P, 'adam', B=B_gpu, N=8, **rows)['total']) / GiB:.1f}" == "14.5"
# (r1) "the 16-bit weight copies mixed precision keeps for the backward pass (2P bytes, 1.9 GiB) ... The GPT's plan
# leaves 14.5 GiB for both" (with the CUDA context's 1-2 GB)
assert f"{2 * P / GiB:.1f}" == "1.9" and 2 * P / GiB + 2 < 14.5
# (r1) Step 3's answer: "B_crit is taken at the final loss; earlier it is smaller, so 1.77 to 2.54 is a floor":
# B_crit falls with the loss (eq. 1.4), so at any higher loss 1 + B / B_crit is larger
assert crit_of(L_S + 0.5) < crit_of(L_S) and 1 + B / crit_of(L_S + 0.5) > 1 + B / B_crit_S
# (r1) "11's Problem 4 GPT ... B = 1,024 sequences an update (11 took 64)"
import json as _json, pathlib as _pathlib
_nb11 = next(_pathlib.Path(".").glob("11-*.ipynb"))
assert "P_gpt, B_gpt = 10**9, 64" in "".join("".join(c["source"]) for c in _json.loads(_nb11.read_text())["cells"])
# "the activations take most of the rest": a_out and t for 16 sequences, 46.5 GiB of the 61.0 beside the fixed terms
assert f"{16 * per_row / GiB:.1f}" == "46.5" and f"{(card - fixed) / GiB:.1f}" == "61.0" and 16 * per_row > 0.5 * (card - fixed)

# the Summary's "What to remember" (r219): 18.6 GiB of fixed terms, 20 sequences of 2.91 GiB, 8 x 16; 15.6 ms at every N;
# B = 512 63 to 71 GPU-hours against 90; 16 GPUs at the same B 6.0 h, 96 GPU-hours, B = 2,048 134 to 149: all pinned above
# Problems: 1. InfiniBand 140 ms, 3.4%; 2. 7B: 130 GiB of fixed terms, my_plan None; ZeRO-2 at N = 8 (r219): a
# reduce-scatter a micro-batch and one all-gather of the float32 weights an update, (R-1)/R 4P bytes each, (N+1)/2
# all-reduces: 70 ms (1.7%); ZeRO-3 on the 1B plan: each
# micro-batch two all-gathers of the float32 weights and a reduce-scatter of the gradients, (R-1)/R G bytes each, "the
# bytes of 1.5 ring all-reduces": 187 ms an update at N = 8 (4.5%), 747 ms at N = 32 (15.8%);
assert f"{1e3 * ib:.0f}" == "140" and f"{ib_share:.1%}" == "3.4%" and 450 / 50 == 9
assert f"{ib_half / (compute + ib_half):.1%}" == "6.6%"  # Answer 1: "(6.6% at half the peak)"
assert f"{big_fixed / GiB:.0f}" == "130" and big_plan is None and solution_plan(B_gpu, card, big_fixed, per_row) is None
assert abs(3 * (R - 1) / R * 4 * P / 450e9 - 1.5 * ring) < 1e-15
# "In float32 ... DeepSpeed and PyTorch's FSDP ... under mixed precision, send 16-bit weights and gradients: about half
# these times": the same three collectives of 2 P bytes instead of 4 P (no latency in these rings: exactly half)
assert abs(1.5 * comm_cost.ring_time(2 * P, R, latency=0, bandwidth=450e9) - zero3[8] / 8 / 2) < 1e-12
_half_ring = comm_cost.ring_time(4 * P, R, latency=0, bandwidth=450e9) / 2  # a reduce-scatter or an all-gather
assert abs(zero2 - (8 * _half_ring + _half_ring)) < 1e-15 and abs(zero2 - (8 + 1) / 2 * ring) < 1e-15
assert (f"{1e3 * zero2:.0f}", f"{zero2 / (compute + zero2):.1%}") == ("70", "1.7%") and zero2 < zero3[8]
_z = {n: (f"{1e3 * zero3[n]:.0f}", f"{zero3[n] / (compute + zero3[n]):.1%}") for n in (8, 32)}
assert _z == {8: ("187", "4.5%"), 32: ("747", "15.8%")}, _z
# 3. (r1) T = 4,096, 128 a GPU: "the 34 Th and logits terms double, the stored scores quadruple"; "Fused: 5.81 GiB a
# sequence, 10 fit: 16 x 8. Stored scores add 20.0 GiB a sequence, four times
# T = 2,048's 5.0; 2 fit: 64 x 2"
assert T2 == 2 * T and per_row2 == 2 * per_row and scores2 == 4 * _scores and fixed2 > fixed
assert f"{per_row2 / GiB:.2f}" == "5.81" and f"{scores2 / GiB:.1f}" == "20.0"
assert [int((card - fixed2) // row) for row in fit2.values()] == [10, 2]
assert [solution_plan(B_gpu, card, fixed2, row) for row in fit2.values()] == [(16, 8), (64, 2)]
assert [plan(B_gpu, card, fixed2, row) for row in fit2.values()] == [(16, 8), (64, 2)]
assert f"{_scores / GiB:.1f}" == "5.0" and scores2 / _scores == 4
print("lesson 23: every number the prose states checks out")

# Step 4's exercise (r2): run_time, yours or the solution, gives the run's row and every step the table uses
assert run_time in (my_run_time, solution_run_time)
check_run_time(solution_run_time)
assert (f"{step:.2f}", f"{hours:.1f}", f"{gpu_hours:.0f}") == ("4.26", "11.3", "90") and gpu_hours == R * hours
assert abs(step512 - run_time(1, T_gpu // 2, gpus=R, bandwidth=450e9, **gpt)[0]) < 1e-15
# the figure's hatched bar is Step 1's Keras-on-TensorFlow plan: 32 x 4 with the scores stored, 50.3 GiB
assert (N_tf, b_tf) == (32, 4) and f"{tf_total / GiB:.1f}" == "50.3"
