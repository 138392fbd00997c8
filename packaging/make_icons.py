"""Render Engram's app icon (resources/icons/engram.svg) into the per-OS icon files.

Writes ``engram.png`` (Linux window/desktop-entry icon, 512 px), ``engram.ico``
(Windows, 16-256 px) and ``engram.icns`` (macOS, 16-1024 px) next to the SVG.

Qt renders the SVG (QtSvg ships in PySide6-Essentials), so no extra tool is needed.
ICO and ICNS are written by hand as containers of PNG images: Qt's own ico/icns
writers store a single size, and a single size looks blurry in a taskbar or Finder.

Run ``python packaging/make_icons.py`` (build.sh does, only when a file is missing
or older than the SVG); ``--check`` only reports whether they are up to date.
"""

from __future__ import annotations

import argparse
import logging
import struct
import sys
from pathlib import Path

log = logging.getLogger("engram.packaging")

ROOT = Path(__file__).resolve().parent.parent
ICONS = ROOT / "resources" / "icons"
SVG = ICONS / "engram.svg"
OUTPUTS = ("engram.png", "engram.ico", "engram.icns")

PNG_SIZE = 512
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# ICNS type codes whose payload may be PNG, by pixel size (Apple's "icns" format).
ICNS_TYPES = ((16, b"icp4"), (32, b"icp5"), (64, b"icp6"), (128, b"ic07"),
              (256, b"ic08"), (512, b"ic09"), (1024, b"ic10"))


def render_png(svg: Path, size: int) -> bytes:
    """Render `svg` into a square PNG of `size` pixels and return its bytes."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    # QPainter on a QImage needs a Gui application for font/paint engine set-up.
    if QGuiApplication.instance() is None:
        _render_png_app.append(QGuiApplication(["make_icons", "-platform", "offscreen"]))
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())


# Keeps the QGuiApplication alive for the whole run (Qt needs exactly one).
_render_png_app: list[object] = []


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """An ICO file holding one PNG per size (Vista+ reads PNG entries natively)."""
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = 6 + 16 * len(sizes)
    entries, payload = b"", b""
    for size in sizes:
        data = pngs[size]
        # Width/height 0 means 256 in the ICO directory.
        dim = 0 if size >= 256 else size
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(data), offset + len(payload))
        payload += data
    return header + entries + payload


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """An ICNS file holding PNG payloads for the standard macOS sizes."""
    chunks = b""
    for size, code in ICNS_TYPES:
        data = pngs[size]
        chunks += code + struct.pack(">I", 8 + len(data)) + data
    return b"icns" + struct.pack(">I", 8 + len(chunks)) + chunks


def up_to_date(icons: Path = ICONS) -> bool:
    """True when every derived icon exists and is not older than the SVG."""
    svg = icons / "engram.svg"
    if not svg.exists():
        return False
    stamp = svg.stat().st_mtime
    return all((icons / name).exists() and (icons / name).stat().st_mtime >= stamp for name in OUTPUTS)


def build(icons: Path = ICONS) -> list[Path]:
    """Write engram.png/.ico/.icns from engram.svg; return the written paths."""
    svg = icons / "engram.svg"
    sizes = {PNG_SIZE, *ICO_SIZES, *(s for s, _ in ICNS_TYPES)}
    pngs = {size: render_png(svg, size) for size in sorted(sizes)}
    written = []
    for name, data in (("engram.png", pngs[PNG_SIZE]),
                       ("engram.ico", ico_bytes({s: pngs[s] for s in ICO_SIZES})),
                       ("engram.icns", icns_bytes(pngs))):
        target = icons / name
        target.write_bytes(data)
        written.append(target)
        log.info("wrote %s (%d bytes)", target, len(data))
    return written


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the icons are missing or stale")
    parser.add_argument("--force", action="store_true", help="rewrite even when up to date")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.check:
        return 0 if up_to_date() else 1
    if up_to_date() and not args.force:
        log.info("icons are up to date")
        return 0
    build()
    return 0


if __name__ == "__main__":
    sys.exit(main())
