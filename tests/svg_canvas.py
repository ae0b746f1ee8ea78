"""Where an SVG figure's text lies: every label's approximate extent against the canvas (matplotlib's SVG
with svg.fonttype none: one <text> per label, x and y in the viewBox's units, its font size in its style)."""
import re
import xml.etree.ElementTree as ET

CHAR_WIDTH = 0.6  # DejaVu Sans's mean advance, in ems
SVG = "{http://www.w3.org/2000/svg}"


def labels_off_canvas(svg: str) -> list[str]:
    """The labels whose extent (characters x CHAR_WIDTH x font size wide, a font size high, placed by
    text-anchor and rotation) leaves the canvas, each with its extent."""
    root = ET.fromstring(svg)
    _, _, width, height = (float(v) for v in root.get("viewBox").split())
    off = []
    for text in root.iter(f"{SVG}text"):
        label = "".join(text.itertext())
        style = text.get("style", "")
        size = float(re.search(r"font-size: ([\d.]+)px", style).group(1))
        anchor = re.search(r"text-anchor: (\w+)", style).group(1)
        x, y = float(text.get("x")), float(text.get("y"))
        angle = float(re.search(r"rotate\((-?[\d.]+)", text.get("transform", "rotate(0")).group(1))
        length = CHAR_WIDTH * size * len(label)
        start = {"start": 0.0, "middle": -length / 2, "end": -length}[anchor]
        along, across = (start, start + length), (-size, 0.0)  # the baseline at y: the glyphs above it
        if abs(angle) % 180 == 90:  # vertical: runs up the page from (x, y)
            box = (x - size, x, y - along[1], y - along[0])
        else:
            box = (x + along[0], x + along[1], y + across[0], y + across[1])
        if box[0] < 0 or box[1] > width or box[2] < 0 or box[3] > height:
            off.append(f"{label!r} at x {box[0]:.0f}-{box[1]:.0f}, y {box[2]:.0f}-{box[3]:.0f} "
                       f"(canvas {width:.0f} x {height:.0f})")
    return off
