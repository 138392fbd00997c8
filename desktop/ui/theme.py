"""Look and feel: palette-aware colours, SVG icons tinted for light or dark, the style sheet.

Nothing here hard-codes a background: widgets keep the system palette (so the app
follows the OS light/dark setting), and the few accent colours (amber citation
chips, red dead ends, health bars) are picked per palette so they read on both.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

from desktop.paths import resource_path

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication

log = logging.getLogger("engram.ui")

ICON_SIZES = (16, 20, 24, 32, 48)


def is_dark(palette: QPalette | None = None) -> bool:
    """True when the window background is dark (system dark mode or a dark theme)."""
    pal = palette or QGuiApplication.palette()
    return pal.color(QPalette.ColorRole.Window).lightnessF() < 0.5


def accent(name: str, palette: QPalette | None = None) -> QColor:
    """An accent colour that reads on the current palette.

    Names: amber / amber_bg (memory chips), red / red_bg (dead ends), green, blue, muted.
    """
    dark = is_dark(palette)
    table = {
        "amber": ("#f2b84b", "#9a5b00"),
        "amber_bg": ("#4a3a14", "#fff1cc"),
        "red": ("#ff7b72", "#b42318"),
        "red_bg": ("#4d1f1c", "#fde3e1"),
        "green": ("#56d364", "#1a7f37"),
        "blue": ("#79a8ff", "#1f5fbf"),
    }
    if name == "muted":
        return (palette or QGuiApplication.palette()).color(QPalette.ColorRole.PlaceholderText)
    pair = table.get(name, ("#888888", "#666666"))
    return QColor(pair[0] if dark else pair[1])


def css(color: QColor) -> str:
    """#rrggbb of a colour, for rich text and style sheets."""
    return color.name(QColor.NameFormat.HexRgb)


@lru_cache(maxsize=256)
def _svg_text(name: str) -> str:
    path = resource_path("icons") / f"{name}.svg"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        log.warning("missing icon %s", path)
        return ""


def icon(name: str, color: QColor | None = None) -> QIcon:
    """An icon from resources/icons/<name>.svg, drawn crisp at every size in the palette's text colour."""
    text = _svg_text(name)
    result = QIcon()
    if not text:
        return result
    tint = color or QGuiApplication.palette().color(QPalette.ColorRole.WindowText)
    data = QByteArray(text.replace("currentColor", css(tint)).encode("utf-8"))
    renderer = QSvgRenderer(data)
    ratio = 2.0  # render at 2x so HiDPI screens get sharp strokes
    for size in ICON_SIZES:
        pix = QPixmap(int(size * ratio), int(size * ratio))
        pix.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pix)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter, QRectF(0, 0, size * ratio, size * ratio))
        painter.end()
        pix.setDevicePixelRatio(ratio)
        result.addPixmap(pix)
    return result


def app_icon() -> QIcon:
    """The application's own (full-colour) icon."""
    path = resource_path("icons") / "app.svg"
    return QIcon(str(path)) if path.exists() else QIcon()


def style_sheet() -> str:
    """The app style sheet: only spacing, radii and palette() references, never fixed backgrounds."""
    path = resource_path("styles") / "engram.qss"
    try:
        base = path.read_text(encoding="utf-8")
    except OSError:
        base = ""
    amber, amber_bg = css(accent("amber")), css(accent("amber_bg"))
    red, red_bg = css(accent("red")), css(accent("red_bg"))
    return (base.replace("@amber_bg", amber_bg).replace("@amber", amber)
            .replace("@red_bg", red_bg).replace("@red", red))


def apply_theme(app: QApplication) -> None:
    """Install the style sheet for the current palette (call again when the OS scheme changes)."""
    _svg_text.cache_clear()
    app.setStyleSheet(style_sheet())


ICON_SIZE = QSize(18, 18)
