"""The lab's finished configurations against the effective batch, by family, on given Axes.

    a fixed-b family: one micro-batch b, >= 2 values of B = N·b  (circles joined by a line)
    a fixed-B family: one B, >= 2 values of N                    (open squares; the legend
                                                    joins with "=" the runs that coincide)
    noise(B) ≈ c·B^slope, the slope fitted by least squares on log-log axes (dashed)

Families never mix settings: a schedule or clipping changes what is learned.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

import numpy as np
from matplotlib import colormaps
from matplotlib.ticker import NullLocator

from ..studies.figures.plots import finite
from ..studies.stats import mean_std


def setting_tag(config):
    """`""` for a plain run, else a short name of its setting: `", cosine lr"`, `", BN per update"`."""
    get = lambda name, default: getattr(config, name, default)  # noqa: E731
    tags = []
    if get("short_by", 0):
        tags.append(f"uneven (B = N·b - {config.short_by})")
    if get("schedule", "constant") != "constant":
        tags.append(f"{config.schedule} lr")
    if get("batchnorm", None) is not None:
        tags.append(f"BN {'per update' if config.batchnorm == 'window' else 'per micro-batch'}")
    if get("clip_norm", None) is not None:
        tags.append(f"clip {'each micro-batch' if config.clip == 'micro' else 'once'}")
    return "".join(", " + t for t in tags)


def short(config):
    return f"{config.strategy} N={config.accum_steps}"


def _setting(config):
    """What a family shares besides N, b and B: everything that changes the learning."""
    d = config.to_dict()
    for k in ("strategy", "accum_steps", "micro_batch", "seed"):
        d.pop(k, None)
    return tuple(sorted((k, str(v)) for k, v in d.items()))


def families(groups):
    """`[(kind, value, [groups])]`: fixed-b families (>= 2 values of B) and fixed-B families
    (>= 2 values of N), each within one setting; then the groups in neither ("other")."""
    fams, member = [], set()
    for kind, key in (("b", lambda c: c.micro_batch), ("B", lambda c: c.effective_batch)):
        split = {}
        for i, g in enumerate(groups):
            c = g.results[0].config
            split.setdefault((key(c), _setting(c)), []).append(i)
        for (value, _), idx in split.items():
            other = (lambda c: c.effective_batch) if kind == "b" else (lambda c: c.accum_steps)
            if len({other(groups[i].results[0].config) for i in idx}) >= 2:
                fams.append((kind, value, [groups[i] for i in idx]))
                member.update(idx)
    rest = [g for i, g in enumerate(groups) if i not in member]
    if rest:
        fams.append(("other", None, rest))
    return fams


def against_batch(ax_acc, ax_noise, groups):
    """Final test accuracy (in percent) and loss noise against B, mean ± std over seeds, one colour per
    family; each family's errorbars carry its legend label (with a fixed-b family's fitted
    slope). `groups` are finished; `ax_noise` None draws the accuracy alone."""
    colors = colormaps["Dark2"].colors
    batches, fitted = set(), False
    for k, (kind, value, members) in enumerate(families(groups)):
        color = "grey" if kind == "other" else colors[k % len(colors)]
        members = sorted(members, key=lambda g: (g.results[0].config.effective_batch,
                                                 g.results[0].config.accum_steps))
        B = np.array([g.results[0].config.effective_batch for g in members], dtype=np.float64)
        batches.update(int(v) for v in B)
        acc = [mean_std([100 * r.accuracy for r in g.results]) for g in members]  # percent
        noise = [mean_std([v for v in (finite(r.loss_noise.get("std")) for r in g.results) if v]
                          or [np.nan]) for g in members]
        mean_noise = np.array([m for m, _ in noise])
        names = ", ".join(short(g.results[0].config) for g in members)
        if kind == "B":  # one x: say which points coincide, in the legend
            names = _coinciding(members, [m for m, _ in acc], list(mean_noise))
        tag = setting_tag(members[0].results[0].config)
        if kind == "b":
            label, style = f"fixed b = {value}{tag}: {names}", dict(fmt="o-")
        elif kind == "B":
            label, style = f"fixed B = {value}{tag}: {names}", \
                dict(fmt="s", markerfacecolor="none", markersize=10, markeredgewidth=1.6)
        else:
            label, style = "other runs", dict(fmt="D", alpha=0.7)
        ok = np.isfinite(mean_noise) & (mean_noise > 0)
        if ax_noise is not None and kind == "b" and len(set(B[ok])) >= 2:  # fitted, not a law
            slope, logc = np.polyfit(np.log(B[ok]), np.log(mean_noise[ok]), 1)
            grid = np.geomspace(B[ok].min(), B[ok].max(), 20)
            ax_noise.plot(grid, np.exp(logc) * grid ** slope, "--", color=color, linewidth=1)
            fitted = True
            label += f" (fitted slope {slope:+.2f})"
        ax_acc.errorbar(B, [m for m, _ in acc], yerr=[s for _, s in acc], color=color,
                        capsize=3, label=label, **style)
        if ax_noise is not None and ok.any():
            ax_noise.errorbar(B[ok], mean_noise[ok], yerr=np.array([s for _, s in noise])[ok],
                              color=color, capsize=3, label=label, **style)
    for ax in (ax_acc,) if ax_noise is None else (ax_acc, ax_noise):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("effective batch B = N·b")
        if batches:
            ticks = sorted(batches)
            ax.set_xticks(ticks, [str(b) for b in ticks])
            ax.set_xlim(min(ticks) / 1.5, max(ticks) * 1.5)
        ax.xaxis.set_minor_locator(NullLocator())
    ax_acc.set_ylabel("final test accuracy (%)")
    ax_acc.set_title("Final test accuracy against B (± std over seeds)")
    if ax_noise is None:
        return
    ax_noise.set_yscale("log")
    ax_noise.set_ylabel("loss std around its moving average")
    # the title names the dashed fit only when one is drawn (a fixed-b family of >= 2 values of B)
    ax_noise.set_title("Loss noise against B" + (" (dashed: fit;\na 1/√B law has slope -0.50)" if fitted else ""))


def _coinciding(members, *values):
    """The members' names, those within 0.1% of each other in every one of `values` (lists
    of means) joined by " = ": `"large_batch N=1 = fused N=4"`."""
    seen = []  # [(values, names)]
    for i, g in enumerate(members):
        mine = [v[i] for v in values]
        for point, names in seen:
            if all(abs(a - b) <= 1e-3 * abs(a) for a, b in zip(point, mine)
                   if np.isfinite(a) and np.isfinite(b)):
                names.append(short(g.results[0].config))
                break
        else:
            seen.append((mine, [short(g.results[0].config)]))
    return ", ".join(" = ".join(names) for _, names in seen)
