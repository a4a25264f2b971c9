"""The memory budget as a widget: sliders for B, N, dtype, optimizer and recomputation, and
stacked bars of what training holds, beside each term on its own (a linear axis, so a fourfold
shrink reads as one), redrawn as they move.

    Budget(model)            # a cell ending with it shows it; P, a and i read from the model
    Budget(params=203_530, activation_bytes_per_row=5224, input_bytes_per_row=3136)

Each bar is `gradlab.studies.memory_budget.budget` (its docstring has the formula):

    total = P s (2 + k + [N > 1]) + ceil(B / N) (a (kept if recompute else 1) + [recompute] g + t) + B i

drawn beside the same B as one large batch (N = 1, no recomputation), so the learner sees
what accumulation and recomputation take away (activations) and what they cannot (weights,
gradients, slots; accumulation adds one copy of P). The plot is a PNG in an `ipywidgets.Image`,
so a stored notebook with its widget state shows the last picture.

Lessons: notebooks/11-memory-budget.ipynb, notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

import base64
import io
import textwrap
import math
from types import SimpleNamespace

import ipywidgets as w
from matplotlib.figure import Figure
from matplotlib.ticker import StrMethodFormatter

from ..studies import memory_budget as mb

COLORS = dict(weights="#4c72b0", gradients="#55a868", optimizer="#c44e52", accumulator="#8172b2",
              activations="#ccb974", backward="#8c8c8c", inputs="#64b5cd")
MAX_B, MAX_N = 4096, 64


class Budget:
    """The memory budget of one model, with controls.

    Args:
        model: a Keras model with an Input: P = its trainable parameters, a and i from its
            shapes (`memory_budget.activation_bytes_per_row`, `input_bytes_per_row`), a at
            each dtype. Or None, and give `params` and the bytes by hand.
        params: P, when no model is given.
        activation_bytes_per_row: a at float32 when no model is given (scaled as s / 4).
        input_bytes_per_row: i when no model is given (kept whatever the dtype).
        B, N, dtype, optimizer, recompute, kept: the controls' starting values.
        backward_bytes_per_row: t at float32 (scaled as s / 4), the backward pass's
            temporaries per row (`memory_budget.backward_bytes_per_row`); 0 leaves them out.
        segment_bytes_per_row: g at float32 (scaled as s / 4), the rebuilt segment's
            activations per row, held with recomputation only; 0 leaves it out.
        scale: the per-term panel's axis, "linear" (the default: a bar's length is its MiB, so
            activations cut fourfold look a quarter as long) or "log" (thin terms stay visible).

    `budget.result` is the latest `budget(...)` dict, `budget.controls` the widgets by name,
    `budget.widget` the whole box; `budget.update()` redraws (the controls call it).
    """

    def __init__(self, model=None, params=None, activation_bytes_per_row=None, input_bytes_per_row=0,
                 B=256, N=1, dtype="float32", optimizer="adam", recompute=False, kept=0.25,
                 backward_bytes_per_row=0, segment_bytes_per_row=0, scale="linear"):
        if scale not in ("log", "linear"):
            raise ValueError(f"scale is 'log' or 'linear', got {scale!r}")
        self.scale = scale
        if model is not None:
            params = sum(math.prod(v.shape) for v in model.trainable_weights)
            self._a = {d: mb.activation_bytes_per_row(model, dtype=d) for d in mb.DTYPE_BYTES}
            input_bytes_per_row = mb.input_bytes_per_row(model)
        elif params is None or activation_bytes_per_row is None:
            raise ValueError("give a model, or params and activation_bytes_per_row, got "
                             f"params={params!r}, activation_bytes_per_row={activation_bytes_per_row!r}")
        else:
            self._a = {d: activation_bytes_per_row * s / 4 for d, s in mb.DTYPE_BYTES.items()}
        self.params, self.input_bytes_per_row = params, input_bytes_per_row
        # Checked before any widget is made: a bad value raises here, naming itself.
        mb.budget(params, optimizer, B, N, dtype, self._a.get(dtype, 0), input_bytes_per_row, recompute, kept,
                  backward_bytes_per_row=backward_bytes_per_row, segment_bytes_per_row=segment_bytes_per_row)
        self._t = {d: backward_bytes_per_row * s / 4 for d, s in mb.DTYPE_BYTES.items()}
        self._g = {d: segment_bytes_per_row * s / 4 for d, s in mb.DTYPE_BYTES.items()}
        if not (B <= MAX_B and N <= MAX_N and kept >= 0.05):
            raise ValueError(f"the sliders reach B <= {MAX_B}, N <= {MAX_N}, kept >= 0.05; "
                             f"got B={B!r}, N={N!r}, kept={kept!r}")
        slider = dict(continuous_update=False, style={"description_width": "7em"},
                      layout=w.Layout(width="380px"))
        self.controls = c = SimpleNamespace(
            B=w.IntSlider(value=B, min=1, max=MAX_B, description="B (rows)", **slider),
            N=w.IntSlider(value=N, min=1, max=MAX_N, description="N (accum)", **slider),
            dtype=w.Dropdown(options=list(mb.DTYPE_BYTES), value=dtype, description="dtype",
                             style=slider["style"]),
            optimizer=w.Dropdown(options=list(mb.SLOTS), value=optimizer,
                                 description="optimizer", style=slider["style"]),
            recompute=w.Checkbox(value=recompute, description="recompute activations"),
            kept=w.FloatSlider(value=kept, min=0.05, max=1.0, step=0.005, description="kept share",
                               readout_format=".3f", disabled=not recompute, **slider),
            text=w.Label(),
            plot=w.Image(format="png", layout=w.Layout(width="720px")))
        for name, widget in vars(c).items():
            widget.add_class("gradlab-budget-" + name.lower())
            if name not in ("text", "plot"):
                widget.observe(lambda _: self.update(), "value")
        self.widget = w.HBox([w.VBox([c.B, c.N, c.dtype, c.optimizer, c.recompute, c.kept, c.text]),
                              c.plot])
        self.widget.add_class("gradlab-budget")
        self.update()

    def update(self):
        """Recompute the budget at the controls' values and redraw; returns the result."""
        c = self.controls
        c.kept.disabled = not c.recompute.value
        args = dict(optimizer=c.optimizer.value, dtype=c.dtype.value, input_bytes_per_row=self.input_bytes_per_row,
                    activation_bytes_per_row=self._a[c.dtype.value],
                    backward_bytes_per_row=self._t[c.dtype.value])
        self.result = mb.budget(self.params, B=c.B.value, N=c.N.value, recompute=c.recompute.value,
                                kept=c.kept.value, segment_bytes_per_row=self._g[c.dtype.value], **args)
        self.large_batch = mb.budget(self.params, B=c.B.value, N=1, **args)
        c.text.value = (f"total {_mib(self.result['total'])} MiB (one large batch: "
                        f"{_mib(self.large_batch['total'])} MiB); b = {self.result['b']} rows")
        self._labels = ["large batch\nN=1", f"N={c.N.value}, b={self.result['b']}"
                        + (f"\nrecompute {c.kept.value:.3f}" if c.recompute.value else "")]
        fig = plot_budget([self.large_batch, self.result], self._labels, scale=self.scale)
        c.plot.value = _png(fig)
        return self.result

    def picture(self, scale=None, stacks=True):
        """The current bars as an `IPython.display.Image`: a stored notebook shows it where
        widgets do not render (GitHub). `scale` None: the widget's own picture; "linear" or
        "log": the same bars redrawn with the per-term panel on that axis (`stacks` False: that
        panel alone)."""
        if scale is None:
            from IPython.display import Image
            return Image(data=self.controls.plot.value, format="png")
        return picture_budget([self.large_batch, self.result], self._labels, scale=scale, stacks=stacks)

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = repr(self)
        # what GitHub and nbviewer show, having no widgets (a bundle carries images as base64 text)
        bundle["image/png"] = base64.b64encode(self.controls.plot.value).decode("ascii")
        return bundle

    def __repr__(self):
        return f"<gradlab.lab.Budget P={self.params} total={_mib(self.result['total'])} MiB>"


def plot_budget(results, labels, peaks=None, scale="log", terms=True, limit=None, peak_label="measured peak",
                zoom=None, names=None, title="what training holds", legend_strip=True, stacks=True,
                totals_on_bars=False, legend_outside=False):
    """Stacked bars, one per `budget(...)` result, of its terms in MiB (`TERMS` bottom up), and
    beside them each term on its own, on a log axis: the terms too small to see in a stack
    (weights, slots, inputs beside the activations) keep a readable bar and their MiB.

    Args:
        results, labels: one `budget(...)` dict and one label per bar.
        peaks: None, or one measured value (MiB) per bar, drawn as a black tick across it and
            labelled, so the plan and the measurement read side by side.
        peak_label: the ticks' name in the legend: "measured peak", or what the ticks are
            (lesson 11's: a measured update's median plus what the budget says is held).
        scale: the per-term panel's x axis, "log" or "linear".
        terms: False draws the stacks alone.
        limit: None, or (MiB, label): a dashed line across the stacks at that height, such as
            a GPU's memory, so a bar over it reads as "does not fit" (lesson 01).
        zoom: None, or MiB: under the stacks, the same stacks cut at `zoom` MiB, each term that
            ends below the cut labelled with its MiB, so terms too thin to see beside the
            activations (lesson 01: 488 MiB under 36,641) read at their size. Needs terms=False.
        names: None, or {term: name} for the legend and the term rows, such as
            {"activations": "layer outputs"} (lesson 01's word); unnamed terms keep their own.
        title: the stacks' title.
        stacks: False draws the per-term panel alone (needs terms, and no peaks, limit or zoom):
            for a lesson whose stacks another figure already shows (lesson 11's widget picture).
        legend_strip: True gives the legend a strip of its own right of the stacks, so it hides
            no bar or total. False sets it over the stacks' upper right, with no strip: for stacks
            that fall to the right (lesson 01: 36,641 MiB down to 5,019), whose short bars leave
            that corner empty, so the strip would leave a third of the figure blank. Needs no peaks
            (their labels sit right of the bars).
        legend_outside: True sets the legend outside the stacks' axes, right of them, and draws the
            figure 1.5 inches a bar wide (at least 5.0) with no strip inside the axes: for stacks with
            measured ticks (lesson 11), where the strip left the axes' right third blank under the
            legend. Needs terms=False and no zoom.
        totals_on_bars: False writes each total above its bar or its measured tick, whichever is
            higher, so a tick just above a bar does not strike through the total. True writes it on
            the bar's top always: for ticks far above their bars (lesson 11's Python loop, 22.0 MiB
            under a tick at 29.5), where a total raised to the tick reads as the tick's value.

    With a limit or measured ticks, a term no bar holds (SGD's optimizer slots) is left out of
    the legend: an entry with no bar behind it reads as a bar the reader cannot find.

    A total of 1,000 MiB or more is labelled to the MiB ("36,641 MiB"), a smaller one to 0.1 MiB.

    Returns:
        a matplotlib Figure (not registered with pyplot): axes[0] the stacks, axes[1] the terms
        (or, with `zoom`, the stacks' bottom).
    """
    if len(results) != len(labels) or (peaks is not None and len(peaks) != len(results)):
        raise ValueError(f"one label (and peak) per result: {len(results)} results, {len(labels)} labels"
                         + ("" if peaks is None else f", {len(peaks)} peaks"))
    if scale not in ("log", "linear"):
        raise ValueError(f"scale is 'log' or 'linear', got {scale!r}")
    if limit is not None and (len(limit) != 2 or not limit[0] > 0):
        raise ValueError(f"limit is None or (MiB > 0, label), got {limit!r}")
    if peaks is not None and not legend_strip:
        raise ValueError("measured peaks label their ticks right of the bars: they need legend_strip=True")
    if legend_outside and (terms or zoom is not None):
        raise ValueError("legend_outside draws the stacks alone: it needs terms=False and no zoom")
    if zoom is not None and (terms or not zoom > 0):
        raise ValueError(f"zoom is None or MiB > 0, with terms=False; got zoom={zoom!r}, terms={terms!r}")
    if not stacks and (not terms or peaks is not None or limit is not None or zoom is not None):
        raise ValueError("stacks=False draws the terms alone: it needs terms=True and no peaks, limit or zoom")
    names = dict(names or {})
    if set(names) - set(mb.TERMS):
        raise ValueError(f"names takes terms among {mb.TERMS}, got {sorted(set(names) - set(mb.TERMS))}")
    name = lambda term: names.get(term, term)
    if not stacks:
        fig = Figure(figsize=(6.0, 3.8), layout="constrained")
        _draw_terms(fig.subplots(), results, labels, scale, name)
        return fig
    if terms:
        fig = Figure(figsize=(9.0, 3.8), layout="constrained")
        ax, terms_ax = fig.subplots(1, 2, width_ratios=(1, 1.5))
    elif zoom is None:
        # legend_outside: 1.5 inches a bar (at least 5.0), so a tick's label clears the next bar (lesson 11: four bars)
        width = max(5.0, 1.5 * len(results) + 1.5) if legend_outside else 6.0
        fig = Figure(figsize=(width, 3.8), layout="constrained")
        ax, terms_ax = fig.subplots(), None
    else:
        fig = Figure(figsize=(6.0, 5.4), layout="constrained")
        ax, zoom_ax = fig.subplots(2, 1, height_ratios=(2.2, 1), sharex=True)
        terms_ax = None
    for a in (ax,) if zoom is None else (ax, zoom_ax):
        bottoms = [0.0] * len(results)
        for term in mb.TERMS:
            heights = [r[term] / 2**20 for r in results]
            bars = a.bar(range(len(results)), heights, 0.6, bottom=bottoms, color=COLORS[term],
                         label=name(term) if (limit is None and peaks is None) or any(heights) else None)
            for bar in bars:  # an empty term atop a stack would pin the axis to its total, leaving no room above
                if bar.get_height() == 0:
                    bar.sticky_edges.y.clear()
                elif a is not ax and bar.get_y() + bar.get_height() <= zoom:  # below the cut: say its MiB
                    a.text(bar.get_x() + bar.get_width() / 2, bar.get_y() + bar.get_height() / 2,
                           f"{bar.get_height():.3g}", ha="center", va="center", fontsize="small", color="white")
            bottoms = [b + h for b, h in zip(bottoms, heights)]
    if zoom is not None:
        zoom_ax.set_ylim(0, zoom)
        zoom_ax.set_ylabel("MiB")
        zoom_ax.set_title(f"the bottom {zoom:,} MiB, enlarged", fontsize="medium")
    for x, r in enumerate(results):  # the small terms vanish beside the activations: say the total
        above = r["total"] / 2**20 if peaks is None or totals_on_bars else max(r["total"] / 2**20, peaks[x])
        mib = r["total"] / 2**20
        ax.text(x, above, f"{mib:,.0f} MiB" if mib >= 1000 else f"{mib:.1f} MiB", ha="center", va="bottom")
    for x, mib in enumerate(peaks or []):  # the measured peak: a black tick, its label right of the bar
        ax.plot([x - 0.38, x + 0.38], [mib, mib], color="black", linewidth=2.5,
                label=peak_label if x == 0 else None)
        ax.text(x + 0.4, mib, f"{mib:.1f}", va="center", fontsize="small")
    if limit is not None:
        ax.axhline(limit[0], color="black", linestyle="--", linewidth=1.2, label=f"{limit[1]}: {limit[0]:,.0f} MiB")
    # with legend_outside (lesson 11's four updates), a label's words stack under its bar: "Python\nloop"
    wrap = lambda part: textwrap.fill(part, 8, break_long_words=False) if legend_outside else part
    (ax if zoom is None else zoom_ax).set_xticks(range(len(results)), ["\n".join(wrap(part) for part in label.split(", "))
                                                                        for label in labels])
    ax.set_ylabel("MiB")
    if max(r["total"] for r in results) >= 1000 * 2**20:  # "40,000", as the totals
        ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    ax.set_title(title)
    ax.margins(y=0.12)
    # The legend gets its own strip right of the bars, so no bar or total hides under it; without the
    # strip, over the stacks' upper right (stacks that fall to the right leave that corner empty).
    if legend_outside:  # room right of the last bar for its tick's label only; the legend beside the axes
        ax.set_xlim(-0.5, len(results) - 0.5 + (0.0 if peaks is None else 0.45))
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    else:
        ax.set_xlim(-0.5, len(results) + (0.9 if peaks is None else 1.4) if legend_strip else len(results) - 0.5)
        ax.legend(loc="upper right", fontsize="small")
    if not terms:
        return fig
    _draw_terms(terms_ax, results, labels, scale, name)
    return fig


def _draw_terms(terms_ax, results, labels, scale, name):
    """The per-term panel of `plot_budget` on `terms_ax`."""
    # One row per term, one bar per result (the first solid, the others hatched), zeros left out;
    # a term no result holds (SGD's optimizer slots) keeps its row, labelled "(none)", not left blank.
    height = 0.8 / len(results)
    for k, r in enumerate(results):
        for row, term in enumerate(mb.TERMS):
            mib = r[term] / 2**20
            if mib > 0:
                y = row + (k - (len(results) - 1) / 2) * height
                terms_ax.barh(y, mib, height, color=COLORS[term], hatch="//" if k else None,
                              edgecolor="white" if k else COLORS[term])
                terms_ax.text(mib, y, f" {mib:.3g}", va="center", fontsize="small")
    terms_ax.set_yticks(range(len(mb.TERMS)), [name(term) + (" (none)" if not any(r[term] for r in results) else "")
                                               for term in mb.TERMS])
    terms_ax.invert_yaxis()
    terms_ax.set_xscale(scale)
    terms_ax.set_xlabel(f"MiB ({scale} scale)")
    terms_ax.margins(x=0.15)
    # One line per result: two long labels side by side ran past the figure's edge.
    terms_ax.set_title(f"each term, {scale} scale\n" + "\n".join(" ".join(label.split()) + (": hatched" if k else ": solid")
                                                           for k, label in enumerate(labels)), fontsize="medium")


def picture_budget(results, labels, **options):
    """`plot_budget(results, labels, **options)` as an `IPython.display.Image` (PNG): a notebook
    shows it whether or not pyplot's inline backend has started (the Figure is not pyplot's).
    Lesson 11 draws its settings with their measured values as ticks this way."""
    from IPython.display import Image
    return Image(data=_png(plot_budget(results, labels, **options)), format="png")


def _mib(n):
    return f"{n / 2**20:.2f}"


def _png(fig, dpi=90):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
