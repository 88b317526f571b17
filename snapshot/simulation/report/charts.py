"""The report's charts, drawn by matplotlib as SVG text to inline in the page.

matplotlib was chosen over a Vega-Lite spec with its renderer inlined: the page then needs no
script to show a chart (vega, vega-lite and vega-embed add about 1 MB of JavaScript to every
page and draw after load), and the charts of a 50,000-node run stay small because what they
draw is binned first (:mod:`.data`). Each chart is an ``<svg role="img">`` with an
``aria-label`` that names it, and a ``<title>`` for readers.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drasnap.snapshot.simulation.report.data import RunReport

__all__ = ["charts", "new_figure", "svg_text"]

_COLORS = {"free": "#e5e7eb", "allocated": "#2563eb", "shared": "#f59e0b"}


def svg_text(fig: Any, label: str) -> str:
    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    # Sized by the page (width 100%), labelled for people and tests.
    text = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r"<svg\1", text, count=1)
    return text.replace(
        "<svg", f'<svg role="img" aria-label="{label}" preserveAspectRatio="xMinYMin meet"', 1
    )


def new_figure(width: float = 8.0, height: float = 3.2) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("svg", force=False)
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"  # text stays text: smaller, searchable
    fig, ax = plt.subplots(figsize=(width, height))
    ax.spines[["top", "right"]].set_visible(False)
    return fig, ax


def estimates_chart(report: RunReport) -> str | None:
    if not report.estimates or all(n <= 0 for n, _ in report.estimates.values()):
        return None  # nothing to draw: the table says why
    fig, ax = new_figure(8, 0.6 + 0.4 * len(report.estimates))
    groups = sorted(report.estimates)
    nodes = [max(report.estimates[g][0], 0) for g in groups]
    ax.barh(groups, nodes, color="#2563eb")
    for i, g in enumerate(groups):
        if report.estimates[g][0] < 0:
            ax.text(0, i, " fits none", va="center")
    ax.set_xlabel("nodes the group needs")
    ax.invert_yaxis()
    return svg_text(fig, "Node group estimates chart")


def utilization_chart(report: RunReport) -> str | None:
    """Per node (or, past the limit, a histogram): the utilization before and after."""
    from drasnap.snapshot.simulation.report.data import LIMITS

    if not report.utilization:
        return None

    def level(u: Any) -> float | None:
        return None if u is None else max(u[0], u[1], u[2])

    before = [level(b) for b, _ in report.utilization.values()]
    after = [level(a) for _, a in report.utilization.values()]
    if len(report.utilization) <= LIMITS["nodes"]:
        names = list(report.utilization)
        fig, ax = new_figure(10, 3.2)
        xs = range(len(names))
        ax.bar(
            [x - 0.2 for x in xs], [b or 0 for b in before], 0.4, label="before", color="#94a3b8"
        )
        ax.bar([x + 0.2 for x in xs], [a or 0 for a in after], 0.4, label="after", color="#2563eb")
        ax.set_xticks(list(xs), names if len(names) <= 30 else [""] * len(names), rotation=90)
        ax.set_xlim(-0.8, max(len(names), 12) - 0.2)
        ax.set_xlabel("node (a missing 'after' bar: the node was removed)")
    else:
        fig, ax = new_figure(10, 3.2)
        bins = [i / 20 for i in range(21)]
        ax.hist(
            [[b for b in before if b is not None], [a for a in after if a is not None]],
            bins=bins,
            label=["before", "after"],
            color=["#94a3b8", "#2563eb"],
        )
        ax.set_xlabel("utilization (the highest of cpu, memory, DRA), nodes binned by 5%")
        ax.set_ylabel("nodes")
    ax.set_ylabel(ax.get_ylabel() or "utilization")
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return svg_text(fig, "Node utilization before and after chart")


def shape_chart(report: RunReport) -> str | None:
    if not report.depth and not report.steps:
        return None
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 4.4))
    for ax in (top, bottom):
        ax.spines[["top", "right"]].set_visible(False)
    seqs, depths = zip(*report.depth, strict=True) if report.depth else ((), ())
    top.step(seqs, depths, where="post", color="#2563eb")
    for seq in report.checkpoints:
        top.axvline(seq, color="#16a34a", linestyle="--", linewidth=1)
    top.set_xlabel("journal seq (dashed: the last checkpoint)")
    top.set_ylabel("fork depth")
    if report.steps:
        xs = [s[0] for s in report.steps]
        bottom.bar(xs, [s[1] for s in report.steps], color="#16a34a", label="commits")
        bottom.bar(
            xs,
            [s[2] for s in report.steps],
            bottom=[s[1] for s in report.steps],
            color="#dc2626",
            label="reverts",
        )
        bottom.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    per = f" (bins of {report.step_bin} steps)" if report.step_bin > 1 else ""
    bottom.set_xlabel(f"step{per}")
    bottom.set_ylabel("top-level forks")
    fig.tight_layout()
    return svg_text(fig, "Run shape chart: fork depth, commits and reverts")


def heat_chart(report: RunReport) -> str | None:
    if not report.heat or not any(cells for _, cells in report.heat):
        return None
    from matplotlib.colors import ListedColormap

    width = max(len(cells) for _, cells in report.heat)
    matrix = [cells + [float("nan")] * (width - len(cells)) for _, cells in report.heat]
    fig, ax = new_figure(10, min(1.0 + 0.12 * len(matrix), 5))
    if report.heat_binned:
        image = ax.imshow(matrix, aspect="auto", cmap="Blues", vmin=0, vmax=1, interpolation="none")
        fig.colorbar(image, ax=ax, label="share allocated")
    else:
        cmap = ListedColormap([_COLORS["free"], _COLORS["allocated"], _COLORS["shared"]])
        ax.imshow(matrix, aspect="auto", cmap=cmap, vmin=0, vmax=2, interpolation="none")
        from matplotlib.patches import Patch

        ax.legend(
            handles=[Patch(color=c, label=n) for n, c in _COLORS.items()],
            frameon=False,
            loc="upper left",
            bbox_to_anchor=(1.0, 1.0),
        )
    rows = [r for r, _ in report.heat]
    step = max(1, len(rows) // 30)
    ax.set_yticks(range(0, len(rows), step), rows[::step], fontsize=7)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("device (in slice order)")
    return svg_text(fig, "Device allocation heat map")


_STATE_STYLE = {"ready": "-", "provisioning": "--", "deleting": ":"}


def timeline_chart(report: RunReport) -> str | None:
    """Each node group's nodes by state, and the pending pods, over simulated time (a step
    after each change). Past 8 groups, the groups' sums (the table has each)."""
    section = report.timeline
    if section is None or len(section.times) < 2:
        return None
    import matplotlib.pyplot as plt
    from drasnap.snapshot.simulation.report.timeline import STATES

    plt.rcParams["svg.fonttype"] = "none"
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 5.2), sharex=True)
    for ax in (top, bottom):
        ax.spines[["top", "right"]].set_visible(False)
    hours = section.end >= 3 * 3600
    xs = [t / 3600 if hours else t / 60 for t in section.times]
    if len(section.groups) <= 8:
        lines = {g: section.nodes[g] for g in section.groups}
    else:
        lines = {
            "all groups": {
                s: [
                    sum(v) for v in zip(*(section.nodes[g][s] for g in section.groups), strict=True)
                ]
                for s in STATES
            }
        }
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (group, states) in enumerate(lines.items()):
        for state in STATES:
            if any(states[state]):
                top.step(
                    xs,
                    states[state],
                    where="post",
                    linestyle=_STATE_STYLE[state],
                    color=colors[i % len(colors)],
                    label=f"{group} {state}",
                )
    top.set_ylabel("nodes")
    top.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    bottom.step(xs, section.pending, where="post", color="#dc2626")
    bottom.set_ylabel("pending pods")
    bottom.set_xlabel("simulated time (" + ("hours" if hours else "minutes") + ")")
    fig.tight_layout()
    return svg_text(fig, "Timeline chart: nodes per group and pending pods over time")


def waits_chart(report: RunReport) -> str | None:
    if not report.wait_bins:
        return None
    fig, ax = new_figure(10, 2.6)
    lows = [low for low, _, _ in report.wait_bins]
    widths = [max(high - low, 1e-9) for low, high, _ in report.wait_bins]
    if report.wait_bins[0][1] == 0:  # every wait 0: one bar
        widths = [1.0]
    ax.bar(lows, [n for _, _, n in report.wait_bins], widths, align="edge", color="#2563eb")
    ax.set_xlabel("wait from arrival to binding (s)")
    ax.set_ylabel("pods")
    return svg_text(fig, "Pod wait distribution chart")


def charts(report: RunReport) -> dict[str, str]:
    """Each chart of ``report`` that has something to draw, by section id."""
    drawn = {
        "groups": estimates_chart(report),
        "nodes": utilization_chart(report),
        "shape": shape_chart(report),
        "devices": heat_chart(report),
        "timeline": timeline_chart(report),
        "waits": waits_chart(report),
    }
    return {k: v for k, v in drawn.items() if v is not None}
