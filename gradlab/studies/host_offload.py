"""Lesson 20's Problem, modelled: a 7B model's gradients summed on the host against on the card.

No measurement: every number follows from the constants below. A LLaMA-7B-shaped model (Touvron et al.,
2023) trains in mixed precision on an 80 GB H100 PCIe, N micro-batches of `tokens` tokens an update, Adam and
the fp32 weights on the host. A micro-batch costs

    d = 6 P tokens / flops          the device's compute (Kaplan et al.'s 6P FLOPs a token; 8P recomputed)
    c = 2 P / bus                   one fp16 gradient copied out over the bus
    h = 5 x 4 P / host_rate         numpy's running sum in fp32: 5 passes over 4P bytes (`sum_bytes` a parameter)

Accumulating on the card, an update takes N d, the fp32 mean out (4P / bus; `mean_bytes` a parameter), the fp16
weights back (2P / bus) and the card's own sums, N (2 + 4 + 4) P / hbm (the fp16 gradient read, the fp32 total read and
written). Copying to the host, `host_schedule` times the update, one stage after another or overlapped.

Memory: the activations of one micro-batch with a 16-bit checkpoint per layer, one layer recomputed at
34 bytes a token per width (Korthikanti et al., 2022) and float32 logits; the card holds them beside
8 bytes a parameter accumulating (fp16 weights and gradient, fp32 accumulator), 4 copying, 6 copying with a
second fp16 buffer. The host holds 20 bytes a parameter: fp32 weights, Adam's two moments, the fp32 sum and
two fp16 buffers.

Lesson: notebooks/20-host-cost.ipynb
"""
from __future__ import annotations

from types import SimpleNamespace

from gradlab.studies.figures.host_cost import host_schedule

FP16, FP32 = 2, 4  # bytes a number
#: bytes a parameter on the card, by design (Adam on the host)
ON_CARD = {"accumulate on the card": FP16 + FP16 + FP32,
           "copy every micro-batch": FP16 + FP16, "copy, two device buffers": FP16 + FP16 + FP16}
#: host_schedule's (overlap, buffers a side), by name
CASES = {"one after another": (False, None), "overlapped, 1 buffer": (True, 1), "overlapped, 2 buffers": (True, 2)}
HOST_BYTES = 3 * FP32 + FP32 + 2 * FP16  # fp32 weights and Adam's two moments, the fp32 sum, two fp16 buffers
PASSES = 5  # numpy's running sum: n_i g_i in place (read, write), then total += (read both, write one)


def offload_problem(card=80e9, micro_batches=10, flops=0.40 * 756e12, host_rate=50e9, bus=64e9, hbm=2.0e12,
                    tokens=32_768, width=4096, layers=32, vocab=32_000, heads=32, context=2048, slow_sum_s=5.0,
                    flops_per_token=6, sum_bytes=PASSES * FP32, mean_bytes=FP32):
    """Lesson 20's Problem: time and memory of accumulating on the card against copying to the host.

    Rule: see the module's docstring; the model sizes are 7 billion parameters and the most the card holds
    accumulating, card / 8 bytes (10 billion on 80 GB).

    Args:
        card: the card's bytes. micro_batches: N. flops: the device's achieved FLOP/s (utilisation x peak).
        host_rate: numpy's bytes read and written a second. bus, hbm: the bus's and the card's memory's
        bytes a second. tokens, width, layers, vocab, heads, context: the micro-batch and the model's shape.
        slow_sum_s: a slower host's sum of one 7B gradient, s (the Problem's "a host summing in 5 s").
        flops_per_token: the device's FLOPs a token per parameter (6; 8 with the forward pass recomputed).
        sum_bytes: bytes the host's sum reads and writes a parameter (5 passes over fp32, 20; the card's own
        sum, 10). mean_bytes: bytes a parameter of the mean sent out accumulating on the card (fp32, 4).
    Returns:
        SimpleNamespace: `kept`, `layer`, `logits`, `acts` (their sum), `whole` (every layer kept) and `scores`
        (unfused attention scores), GB; `fits` {design: billions of parameters beside `acts`}; `problem`
        {P: (seconds accumulating on the card, {case: host_schedule's dict, in s})}; `compute` and `micro`
        {P: N d} and {P: (d, c, h)}, s; at 7 billion `d7`, `c7`, `h7`, `slow_host` (the update with the slow
        host), `pace_rate` (bytes/s below which numpy's sum outlasts d), `t_copy` and `t_sum` (tokens a
        micro-batch at which compute equals a copy, numpy's sum); and the arguments.

    Lesson: notebooks/20-host-cost.ipynb
    """
    N = micro_batches
    kept = FP16 * tokens * width * layers / 1e9
    layer = 34 * tokens * width / 1e9
    logits = FP32 * tokens * vocab / 1e9
    acts = kept + layer + logits
    scores = 5 * heads * context**2 * (tokens // context) / 1e9  # Korthikanti's 5 a s^2 b, if unfused
    fits = {name: (card / 1e9 - acts) / b for name, b in ON_CARD.items()}
    problem, compute, micro = {}, {}, {}
    for P in (7e9, card / ON_CARD["accumulate on the card"]):
        compute[P] = flops_per_token * P * N * tokens / flops
        card_sum = (FP16 + FP32 + FP32) * P / hbm  # the gradient read, the total read and written
        once = compute[P] + mean_bytes * P / bus + FP16 * P / bus + N * card_sum
        micro[P] = d, c, h = compute[P] / N, FP16 * P / bus, sum_bytes * P / host_rate
        problem[P] = once, {k: host_schedule(d, c, h, N, o, b) for k, (o, b) in CASES.items()}
    d7, c7, h7 = micro[7e9]
    per_token = d7 / tokens  # s of compute a token
    return SimpleNamespace(
        card=card, N=N, flops=flops, host_rate=host_rate, bus=bus, hbm=hbm, tokens=tokens, width=width,
        layers=layers, kept=kept, layer=layer, logits=logits, acts=acts, scores=scores,
        whole=34 * tokens * width * layers / 1e9, fits=fits, problem=problem, compute=compute, micro=micro,
        d7=d7, c7=c7, h7=h7, slow_host=host_schedule(d7, c7, slow_sum_s, N, True, 2)["total"],
        slow_sum_s=slow_sum_s, pace_rate=sum_bytes * 7e9 / d7, t_copy=c7 / per_token, t_sum=h7 / per_token)


