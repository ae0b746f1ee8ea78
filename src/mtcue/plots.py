"""What every drawn figure shares, below the stages that draw (reporting's figures, the models stage's
memory-growth curve): colours per model, a grid of panels, the model legend, and SVG output that the same
data always writes byte for byte."""
from __future__ import annotations

import io
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import matplotlib
import matplotlib.font_manager
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from mtcue.io import atomic_write_text

# Okabe-Ito colours (colour-blind safe), the baselines in greys; other models take the rest in turn, then
# Paul Tol's muted ones, so that a figure of up to ten other models gives each its own colour. Okabe-Ito's
# yellow (#F0E442) is Tol's dark yellow here: a line of it was faint on white (contrast 1.3:1).
MODEL_COLOURS = {"BASE": "#999999", "BASE-PM": "#555555", "TAGGING": "#E69F00", "NOVOTNEY-CUE": "#0072B2",
                 "MTCUE": "#D55E00"}
OTHER_COLOURS = ("#009E73", "#CC79A7", "#56B4E9", "#997700", "#000000",
                 "#882255", "#44AA99", "#332288", "#999933", "#AA4499")
# Line markers in turn, one per series: curves that coincide, or colours hard to tell apart, stay apart.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*", "h", "p", "d", "8", "H")
PANEL = (3.6, 2.8)  # inches per panel
LEGEND_EMS = {"char": 0.6, "handle": 2.0 + 0.8, "column": 2.0, "row": 0.5 + 1.0}  # matplotlib's spacings, in ems


def model_colours(names: Iterable[str]) -> dict[str, str]:
    others = [n for n in names if n not in MODEL_COLOURS]
    return {**MODEL_COLOURS, **{n: OTHER_COLOURS[i % len(OTHER_COLOURS)] for i, n in enumerate(others)}}


def grid(n: int, ncols: int = 4, extra_height: float = 0.6) -> tuple[Figure, list]:
    """A figure with n panels (axes), at most `ncols` a row; pyplot's global state is not used."""
    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    fig = Figure(figsize=(PANEL[0] * ncols, PANEL[1] * nrows + extra_height))
    flat = list(fig.subplots(nrows, ncols, squeeze=False).flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def model_legend(fig: Figure, colours: dict[str, str], names: Sequence[str], extra: Sequence[Line2D] = (),
                 markers: dict[str, str] | None = None) -> float:
    """A legend of `names` (their colour; with `markers`, a line with each one's marker) and `extra` below the
    panels, in as many columns as the figure's width holds (each as wide as the longest label, estimated), the
    figure taller by each row past the first; returns the share of the figure's height it takes, for
    tight_layout's rect."""
    handles = [Line2D([], [], color=colours[n], marker=markers[n], label=n) if markers else
               Patch(color=colours[n], label=n) for n in names] + list(extra)
    em = matplotlib.font_manager.FontProperties(size="small").get_size_in_points()
    entry = em * (LEGEND_EMS["handle"] + LEGEND_EMS["column"]
                  + LEGEND_EMS["char"] * max(len(h.get_label()) for h in handles))
    ncol = max(1, min(len(handles), int(fig.get_figwidth() * 72 // entry)))
    rows = math.ceil(len(handles) / ncol)
    fig.set_figheight(fig.get_figheight() + (rows - 1) * LEGEND_EMS["row"] * em / 72)  # panels keep their height
    fig.legend(handles=handles, loc="lower center", ncol=ncol, frameon=False, fontsize="small")
    return (rows * LEGEND_EMS["row"] + 1) * em / (fig.get_figheight() * 72)


def save_svg(fig: Figure, path: str | Path) -> Path:
    """The figure as SVG, written atomically; the same records give the same bytes (no date,
    fixed ids), so a rebuilt figure is identical."""
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "mtcue", "svg.fonttype": "none"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    return atomic_write_text(path, buffer.getvalue())
