"""Lesson 14's overlap schedule as a widget: sliders for the replicas R, the micro-batches N, the
link's bandwidth beta, a ring step's start-up alpha and the backward pass's blocks, and the update
drawn on one ms axis twice, without overlap above and with it below, redrawn as they move.

    Overlap()                    # 14's schedule model: 1B parameters, 16,384 tokens a GPU, H100 peak
    Overlap(R=8, N=8, beta_gbs=450, blocks=16, alpha_us=0)

The model is 14's: a micro-batch computes 6 P FLOPs a token at `flops` (2 P forward, 4 P
backward), its backward pass cut into `blocks` equal blocks; the update's gradient is all-reduced
in `blocks` equal packs, each a ring all-reduce of its own (`comm_cost.ring_time`), deferred to
the last micro-batch, so the first N - 1 micro-batches compute alone and the last is
`timeline.schedule(backward blocks, all-reduce packs, overlap=True)`; without overlap the gradient goes
as one all-reduce after the backward pass, as mirrored `fit` sends it:

    one pack's all-reduce = 2 (R - 1) alpha + 2 (R - 1) / R * (G / blocks) / beta   (with overlap)
    the whole all-reduce  = 2 (R - 1) alpha + 2 (R - 1) / R * G / beta              (without)
    update = N (forward + backward) + (what the all-reduce adds after the last backward pass)
    exposed share = that addition / update

Every pack pays the start-ups again, so finer blocks hide more of the bytes and add start-ups:
at 14's setting (alpha = 14 us, NCCL's) about 18 blocks show least (lesson 14, Problem 4).

Each row is drawn by `timeline.plot_micro_batches` (14's own drawing; the row without overlap
then adds the all-reduce after the backward pass). The plot is a PNG in an `ipywidgets.Image`, so
a stored notebook with its widget state shows the last picture.

Lesson: notebooks/14-communication.ipynb
"""
from __future__ import annotations

import base64
import math
import numbers
from types import SimpleNamespace

import ipywidgets as w
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ..studies.distributed import comm_cost
from ..studies.figures import timeline
from .budget import _png

LIMITS = dict(R=(2, 64), N=(1, 32), beta_gbs=(1.0, 900.0), blocks=(1, 128), alpha_us=(0.0, 100.0))


def overlap_schedule(R=8, N=1, beta_gbs=50.0, blocks=4, alpha_us=14.0, params=1e9, tokens=16_384, flops=989e12,
                     grad_bytes=2):
    """One update's times, ms, by 14's schedule model (the module's rule).

    Args:
        R: replicas in the ring (2 to 64).
        N: micro-batches an update (1 to 32); one all-reduce, deferred to the last.
        beta_gbs: the link's bandwidth, GB/s each way (1 to 900).
        blocks: equal blocks of the backward pass, and packs of the all-reduce (1 to 128).
        alpha_us: a ring step's start-up, µs (0 to 100; 14 is NCCL's network step latency).
        params, tokens, flops, grad_bytes: P, tokens a GPU a micro-batch, FLOP/s, bytes a gradient value.
    Returns:
        dict of ms: forward, backward (a micro-batch's), all_reduce (the whole gradient's, one),
        packs (the blocks' all-reduces together) and start_ups (the packs' part of them that is start-ups),
        update_without and update_with
        (overlap), exposed_without and exposed_with (what the all-reduce adds after the last backward
        pass), and share_without, share_with (exposed / update, fractions).
    Raises:
        ValueError naming the value when a setting is out of its slider's range or not a number.
    """
    for name, value in dict(R=R, N=N, beta_gbs=beta_gbs, blocks=blocks, alpha_us=alpha_us).items():
        low, high = LIMITS[name]
        whole = isinstance(low, int)
        if (isinstance(value, bool) or not isinstance(value, numbers.Real) or (whole and value != int(value))
                or not math.isfinite(value) or not low <= value <= high):
            raise ValueError(f"{name} must be {'a whole number' if whole else 'a number'} from {low} to {high}, "
                             f"got {name}={value!r}")
    forward = 1000 * 2 * params * tokens / flops
    backward = 1000 * 4 * params * tokens / flops
    ring = lambda bytes_: 1000 * comm_cost.ring_time(bytes_, int(R), alpha_us * 1e-6, beta_gbs * 1e9)  # noqa: E731
    whole, pack = ring(grad_bytes * params), ring(grad_bytes * params / blocks)
    c = [backward / blocks] * int(blocks)
    before = (N - 1) * (forward + backward) + forward  # the last micro-batch's backward pass starts here
    out = dict(forward=forward, backward=backward, all_reduce=whole, packs=pack * blocks,
               start_ups=blocks * 2 * (int(R) - 1) * alpha_us * 1e-3)
    for how, last in (("without", backward + whole),
                      ("with", timeline.schedule(c, [pack] * int(blocks), overlap=True)["total"])):
        out[f"update_{how}"] = before + last
        out[f"exposed_{how}"] = last - backward
        out[f"share_{how}"] = (last - backward) / (before + last)
    return out


def plot_overlap_schedule(R=8, N=1, beta_gbs=50.0, blocks=4, alpha_us=14.0, **model):
    """`overlap_schedule(...)` drawn: N micro-batches on one ms axis, without overlap above and with it
    below, each row by `timeline.plot_micro_batches`. Returns (Figure, the schedule's dict)."""
    s = overlap_schedule(R, N, beta_gbs, blocks, alpha_us, **model)
    c, m = [s["backward"] / blocks] * int(blocks), [s["packs"] / blocks] * int(blocks)
    fig = Figure(figsize=(7.0, 3.6), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    sends = (False,) * (int(N) - 1) + (True,)
    end = timeline.plot_micro_batches(s["forward"], c, [0.0] * len(m), top, sends=(False,) * int(N))
    # without overlap: one all-reduce of the whole gradient after the whole backward pass
    top.broken_barh([(end, s["all_reduce"])], (0.1, 0.8), color="tab:orange", edgecolor="white")
    timeline.plot_micro_batches(s["forward"], c, m, bottom, sends=sends)
    for ax, how in ((top, "without"), (bottom, "with")):
        ax.axvline(s[f"update_{how}"], color="black", lw=1, ls="--")
        ax.set(yticks=[0.5, 1.5], yticklabels=["all-reduce", "compute"], ylim=(0, 2),
               title=f"{how} overlap: update {s[f'update_{how}']:.1f} ms, the all-reduce shows "
                     f"{s[f'exposed_{how}']:.1f} ms ({s[f'share_{how}']:.1%})")
    bottom.set_xlabel("ms")
    fig.legend(handles=[Patch(color=col, label=name) for name, col in (
        ("forward", "tab:cyan"), ("backward block", "tab:blue"), ("all-reduce", "tab:orange"))],
        loc="outside lower center", ncols=3, fontsize="small")
    return fig, s


class Overlap:
    """14's overlap schedule with controls.

    Args:
        R, N, beta_gbs, blocks, alpha_us: the sliders' starting values (`overlap_schedule`'s ranges).
        **model: params, tokens, flops, grad_bytes for `overlap_schedule`.

    `overlap.result` is the latest `overlap_schedule(...)` dict, `overlap.controls` the widgets by
    name, `overlap.widget` the whole box; `overlap.update()` redraws (the controls call it). Shown in
    a notebook, it also carries its current picture as a PNG, which renderers without widgets
    (GitHub) show instead.
    """

    def __init__(self, R=8, N=1, beta_gbs=50.0, blocks=4, alpha_us=14.0, **model):
        overlap_schedule(R, N, beta_gbs, blocks, alpha_us, **model)  # a bad value raises here, naming itself
        self.model = model
        slider = dict(continuous_update=False, style={"description_width": "9em"}, layout=w.Layout(width="380px"))
        self.controls = c = SimpleNamespace(
            R=w.IntSlider(value=R, min=LIMITS["R"][0], max=LIMITS["R"][1], description="R (replicas)", **slider),
            N=w.IntSlider(value=N, min=LIMITS["N"][0], max=LIMITS["N"][1], description="N (micro-batches)",
                          **slider),
            beta_gbs=w.FloatSlider(value=beta_gbs, min=LIMITS["beta_gbs"][0], max=LIMITS["beta_gbs"][1], step=1.0,
                                   description="β (GB/s)", readout_format=".0f", **slider),
            blocks=w.IntSlider(value=blocks, min=LIMITS["blocks"][0], max=LIMITS["blocks"][1],
                               description="blocks", **slider),
            alpha_us=w.FloatSlider(value=alpha_us, min=LIMITS["alpha_us"][0], max=LIMITS["alpha_us"][1], step=1.0,
                                   description="α (µs a step)", readout_format=".0f", **slider),
            text=w.Label(),
            plot=w.Image(format="png", layout=w.Layout(width="700px")))
        for name, widget in vars(c).items():
            widget.add_class("gradlab-overlap-" + name.lower())
            if name not in ("text", "plot"):
                widget.observe(lambda _: self.update(), "value")
        self.widget = w.VBox([w.HBox([w.VBox([c.R, c.N, c.alpha_us]), w.VBox([c.beta_gbs, c.blocks])]), c.text,
                              c.plot])
        self.widget.add_class("gradlab-overlap")
        self.update()

    def update(self):
        """Recompute the schedule at the controls' values and redraw; returns the result."""
        c = self.controls
        fig, self.result = plot_overlap_schedule(c.R.value, c.N.value, c.beta_gbs.value, c.blocks.value,
                                                 c.alpha_us.value, **self.model)
        r = self.result
        c.text.value = (f"all-reduce {r['all_reduce']:.1f} ms whole, {r['packs']:.1f} ms in {c.blocks.value} packs "
                        f"({r['start_ups']:.1f} of start-ups); update {r['update_without']:.1f} ms without overlap "
                        f"({r['share_without']:.1%} exposed), {r['update_with']:.1f} ms with "
                        f"({r['share_with']:.1%})")
        c.plot.value = _png(fig, dpi=80)
        return r

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = repr(self)
        # what GitHub and nbviewer show, having no widgets (a bundle carries images as base64 text)
        bundle["image/png"] = base64.b64encode(self.controls.plot.value).decode("ascii")
        return bundle

    def __repr__(self):
        c = self.controls
        return (f"<gradlab.lab.Overlap R={c.R.value} N={c.N.value} beta={c.beta_gbs.value:.0f} GB/s "
                f"blocks={c.blocks.value} alpha={c.alpha_us.value:.0f} µs update={self.result['update_with']:.1f} ms>")
