"""Where an SVG figure's text lies: every label's approximate extent against the canvas (matplotlib's SVG
with svg.fonttype none: one <text> per label, placed by x and y or by translate(), turned by rotate(), its
font size in its style; units the viewBox's)."""
import math
import re
import xml.etree.ElementTree as ET

CHAR_WIDTH = 0.6  # DejaVu Sans's mean advance, in ems
SVG = "{http://www.w3.org/2000/svg}"
NUMBER = r"(-?[\d.]+(?:e-?\d+)?)"


def labels_off_canvas(svg: str) -> list[str]:
    """The labels whose extent (characters x CHAR_WIDTH x font size wide, a font size high above the
    baseline, placed by text-anchor, turned about the anchor point) leaves the canvas, each with its extent."""
    root = ET.fromstring(svg)
    _, _, width, height = (float(v) for v in root.get("viewBox").split())
    off = []
    for text in root.iter(f"{SVG}text"):
        label, style, transform = "".join(text.itertext()), text.get("style", ""), text.get("transform", "")
        size = float(re.search(r"font-size: ([\d.]+)px", style).group(1))
        found = re.search(r"text-anchor: (\w+)", style)
        length = CHAR_WIDTH * size * len(label)
        start = {"start": 0.0, "middle": -length / 2, "end": -length}[found.group(1) if found else "start"]
        moved = re.search(rf"translate\({NUMBER} {NUMBER}\)", transform)
        x, y = (float(v) for v in moved.groups()) if moved else (float(text.get("x", 0)), float(text.get("y", 0)))
        turned = re.search(rf"rotate\({NUMBER}", transform)
        angle = math.radians(float(turned.group(1)) if turned else 0.0)  # clockwise, y pointing down
        corners = [(x + dx * math.cos(angle) - dy * math.sin(angle), y + dx * math.sin(angle) + dy * math.cos(angle))
                   for dx in (start, start + length) for dy in (-size, 0.0)]
        xs, ys = [c[0] for c in corners], [c[1] for c in corners]
        if min(xs) < 0 or max(xs) > width or min(ys) < 0 or max(ys) > height:
            off.append(f"{label!r} at x {min(xs):.0f}-{max(xs):.0f}, y {min(ys):.0f}-{max(ys):.0f} "
                       f"(canvas {width:.0f} x {height:.0f})")
    return off
