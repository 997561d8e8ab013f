"""matplotlib figures of the notebooks, drawn from the small pandas frames of ``linkgraph.explore.queries``.

Each function returns a ``Figure`` and draws a readable "nothing to show" figure when its input is
empty, so a notebook always has its figure to display and save.  No backend is chosen here
(Databricks renders inline; ``linkgraph.explore.widgets.local_dbutils`` selects Agg elsewhere).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

ROLE_COLOURS = {"link farm": "#d62728", "farm target": "#ff7f0e", "syndication": "#1f77b4"}
CHANGE_COLOURS = {"new": "#2ca02c", "vanished": "#7f7f7f", "entered": "#1f77b4", "left": "#d62728",
                  "moved": "#ff7f0e", "unchanged": "#000000"}


def _figure(width: float = 8.0, height: float = 4.5, ncols: int = 1) -> tuple[Figure, list]:
    fig = Figure(figsize=(width, height))
    axes = [fig.add_subplot(1, ncols, i + 1) for i in range(ncols)]
    return fig, axes


def _say_empty(ax, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", wrap=True, fontsize=11, transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])


def rank_distribution_figure(histogram: pd.DataFrame, title: str = "PageRank distribution") -> Figure:
    """Log-log rank distribution from ``explore.rank_histogram``: left, the density (pages per
    unit of rank in each logarithmic bin); right, the share of pages ranked at least x (CCDF)."""
    fig, (density_ax, ccdf_ax) = _figure(11, 4.5, ncols=2)
    fig.suptitle(title)
    if histogram.empty:
        _say_empty(density_ax, "no ranked pages")
        _say_empty(ccdf_ax, "no ranked pages")
        return fig
    h = histogram.sort_values("bin")
    centres = np.sqrt(h["bin_low"] * h["bin_high"])
    density = h["pages"] / (h["bin_high"] - h["bin_low"])
    density_ax.loglog(centres, density, "o-", markersize=4)
    density_ax.set_xlabel("rank")
    density_ax.set_ylabel("pages per unit rank")
    total = h["pages"].sum()
    at_least = h["pages"][::-1].cumsum()[::-1] / total
    ccdf_ax.loglog(h["bin_low"], at_least, "s-", markersize=4, color="#2ca02c")
    ccdf_ax.set_xlabel("rank x")
    ccdf_ax.set_ylabel("share of pages with rank ≥ x")
    for ax in (density_ax, ccdf_ax):
        ax.grid(True, which="both", alpha=0.3)
    ccdf_ax.set_title(f"{total:,} pages", fontsize=10)
    return fig


def convergence_figure(history: pd.DataFrame, title: str = "Convergence of the last rank run") -> Figure:
    """L1 change per iteration (log scale) with the run's tolerance, from ``explore.convergence_history``."""
    fig, (ax,) = _figure()
    if history.empty:
        _say_empty(ax, "no rank run recorded (run linkgraph pagerank)")
        ax.set_title(title)
        return fig
    ax.semilogy(history["iteration"], history["l1_change"], "o-", markersize=3, label="L1 change")
    tol = float(history["tol"].iloc[0])
    ax.axhline(tol, color="grey", linestyle="--", label=f"tol = {tol:g}")
    ax.set_xlabel("iteration")
    ax.set_ylabel("‖r(t+1) − r(t)‖₁")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax.set_title(f"{title}\n{history['run_id'].iloc[0]}: {len(history)} iterations", fontsize=10)
    return fig


def top_bar_figure(frame: pd.DataFrame, label: str, value: str, title: str, xlabel: str | None = None) -> Figure:
    """Horizontal bars of ``value`` per ``label``, the first row on top."""
    fig, (ax,) = _figure(9, max(3.0, 0.3 * len(frame) + 1.2))
    ax.set_title(title)
    if frame.empty:
        _say_empty(ax, "nothing to show")
        return fig
    labels = [str(v) if len(str(v)) <= 60 else str(v)[:57] + "…" for v in frame[label]]
    positions = np.arange(len(frame))[::-1]
    ax.barh(positions, frame[value])
    ax.set_yticks(positions, labels, fontsize=8)
    ax.set_xlabel(xlabel or value)
    return fig


def circle_layout(names: list[str], groups: list[str]) -> dict[str, tuple[float, float]]:
    """Node positions on the unit circle, members of one group next to each other (sorted by
    group, then name), so a farm and its target or a network sit together."""
    order = sorted(zip(groups, names, strict=True))
    count = len(order)
    return {
        name: (math.cos(2 * math.pi * i / count), math.sin(2 * math.pi * i / count))
        for i, (_, name) in enumerate(order)
    }


def domain_subgraph_figure(nodes: pd.DataFrame, edges: pd.DataFrame,
                           title: str = "Link farms and syndication") -> Figure:
    """The reviewed domains (``explore.flagged_domains``: ``domain``, ``role``, ``group``) on a
    circle, coloured by role, with the links among them (``explore.domain_subgraph``) as arrows
    whose width grows with the log of their link count.  Says so when nothing was flagged."""
    fig, (ax,) = _figure(9, 9)
    ax.set_title(title)
    if nodes.empty:
        _say_empty(ax, "no link farms or syndication networks found:\nnothing to review")
        return fig
    position = circle_layout(list(nodes["domain"]), list(nodes["group"]))
    max_links = float(edges["links"].max()) if not edges.empty else 1.0
    for edge in edges.itertuples(index=False):
        (x0, y0), (x1, y1) = position[edge.src_domain], position[edge.dst_domain]
        width = 0.5 + 3.0 * math.log1p(edge.links) / math.log1p(max_links)
        ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                    arrowprops={"arrowstyle": "-|>", "lw": width, "alpha": 0.45, "color": "#555555",
                                "shrinkA": 12, "shrinkB": 12, "connectionstyle": "arc3,rad=0.12"})
    for role, colour in ROLE_COLOURS.items():
        members = nodes[nodes["role"] == role]
        if members.empty:
            continue
        xs = [position[d][0] for d in members["domain"]]
        ys = [position[d][1] for d in members["domain"]]
        ax.scatter(xs, ys, s=220, color=colour, label=f"{role} ({len(members)})", zorder=3, edgecolors="white")
    for name, (x, y) in position.items():   # labels outside the circle, away from the node
        align = "left" if x > 0.3 else "right" if x < -0.3 else "center"
        ax.text(x * 1.1, y * 1.1, name, ha=align, va="center", fontsize=8)
    ax.legend(loc="lower left", fontsize=8)
    ax.set_xlim(-1.8, 1.8)
    ax.set_ylim(-1.5, 1.5)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.text(0.99, 0.01, f"{len(edges)} domain links (arrow width ~ log links)", ha="right", fontsize=8,
            transform=ax.transAxes)
    return fig


def centrality_spam_figure(hosts: pd.DataFrame, title: str = "Top hosts: PageRank, harmonic centrality, spam mass"
                           ) -> Figure:
    """From ``explore.top_hosts``: left, PageRank against harmonic centrality (log-log, each host
    labelled, coloured by spam mass where known); right, each host's relative spam mass (bars;
    none drawn without a trust vector)."""
    fig, (scatter_ax, mass_ax) = _figure(13, 6, ncols=2)
    fig.suptitle(title)
    if hosts.empty:
        _say_empty(scatter_ax, "no host centrality (run linkgraph centrality --level host)")
        _say_empty(mass_ax, "no host centrality")
        return fig
    mass = hosts["spam_mass"].astype("float64")
    known = mass.notna()
    colours = np.where(known, mass.fillna(0.0).clip(-1.0, 1.0), 0.0)
    points = scatter_ax.scatter(hosts["harmonic"], hosts["pagerank"], c=colours, cmap="coolwarm", vmin=-1, vmax=1,
                                s=50, edgecolors="black", linewidths=0.4)
    for row in hosts.itertuples(index=False):
        scatter_ax.annotate(str(row.host), (row.harmonic, row.pagerank), fontsize=7, xytext=(3, 3),
                            textcoords="offset points")
    if (hosts["harmonic"] > 0).all() and (hosts["pagerank"] > 0).all():
        scatter_ax.set_xscale("log")
        scatter_ax.set_yscale("log")
    scatter_ax.set_xlabel("harmonic centrality (HyperBall)")
    scatter_ax.set_ylabel("PageRank (host graph)")
    scatter_ax.grid(True, which="both", alpha=0.3)
    fig.colorbar(points, ax=scatter_ax, label="relative spam mass (grey: no trust vector)" if not known.all()
                 else "relative spam mass")
    if not known.any():
        _say_empty(mass_ax, "no spam mass: set scores.trusted_seeds and rerun linkgraph pagerank")
        return fig
    positions = np.arange(len(hosts))[::-1]
    mass_ax.barh(positions, mass.fillna(0.0), color=np.where(mass.fillna(0.0) > 0.7, "#d62728", "#1f77b4"))
    mass_ax.set_yticks(positions, [str(h) for h in hosts["host"]], fontsize=7)
    mass_ax.axvline(0.0, color="grey", linewidth=0.8)
    mass_ax.set_xlabel("relative spam mass (PR − trust PR) / PR")
    return fig


def rank_changes_figure(top: pd.DataFrame, counts: pd.DataFrame, title: str = "What changed between two runs"
                        ) -> Figure:
    """From ``explore.rank_changes_top`` and ``explore.rank_change_counts``: left, each node's
    position in the earlier run against the later one (log-log, the diagonal = unchanged; a node
    only one run holds is drawn on that run's axis edge), coloured by its kind of change; right,
    the nodes of each kind of change."""
    fig, (scatter_ax, count_ax) = _figure(13, 6, ncols=2)
    fig.suptitle(title)
    if top.empty:
        _say_empty(scatter_ax, "no comparison (run linkgraph diff after two rank runs)")
        _say_empty(count_ax, "no comparison")
        return fig
    before = top["from_position"].astype("float64")
    after = top["to_position"].astype("float64")
    edge = float(np.nanmax(np.concatenate([before.to_numpy(), after.to_numpy()]))) * 1.5
    for change, colour in CHANGE_COLOURS.items():
        rows = top["change"] == change
        if rows.any():
            scatter_ax.scatter(before[rows].fillna(edge), after[rows].fillna(edge), s=18, color=colour, label=change,
                               alpha=0.8)
    scatter_ax.plot([1, edge], [1, edge], color="grey", linewidth=0.8)
    scatter_ax.set_xscale("log")
    scatter_ax.set_yscale("log")
    scatter_ax.invert_xaxis()
    scatter_ax.invert_yaxis()
    scatter_ax.set_xlabel("position in the earlier run (1 = top)")
    scatter_ax.set_ylabel("position in the later run (1 = top)")
    scatter_ax.legend(fontsize=8)
    scatter_ax.grid(True, which="both", alpha=0.3)
    positions = np.arange(len(counts))[::-1]
    count_ax.barh(positions, counts["nodes"], color=[CHANGE_COLOURS.get(c, "#1f77b4") for c in counts["change"]])
    count_ax.set_yticks(positions, [str(c) for c in counts["change"]])
    count_ax.set_xlabel("nodes")
    return fig

