"""Small charts drawn with QPainter (no chart dependency): a score ring, bars and a sparkline.

All colours come from the palette or theme.accent, so charts read in light and dark.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPainterPath, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from desktop.ui.theme import accent


def _score_colour(value: int) -> QColor:
    return accent("green") if value >= 70 else accent("amber") if value >= 40 else accent("red")


class ScoreRing(QWidget):
    """The health score 0-100 as a ring with the number in the middle."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.value = 0
        self.setMinimumSize(QSize(96, 96))
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)

    def set_value(self, value: int) -> None:
        """Show a new score."""
        self.value = max(0, min(100, value))
        self.setAccessibleDescription(str(self.value))
        self.update()

    def sizeHint(self) -> QSize:
        """Square."""
        return QSize(96, 96)

    def paintEvent(self, _event: QPaintEvent) -> None:
        """Track, arc, number."""
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        side = min(self.width(), self.height()) - 10
        rect = QRectF((self.width() - side) / 2, (self.height() - side) / 2, side, side)
        track = QPen(self.palette().color(QPalette.ColorRole.Mid), 8)
        p.setPen(track)
        p.drawEllipse(rect)
        arc = QPen(_score_colour(self.value), 8)
        arc.setCapStyle(Qt.PenCapStyle.RoundCap)
        p.setPen(arc)
        p.drawArc(rect, 90 * 16, -int(self.value / 100 * 360 * 16))
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 1.8)
        font.setBold(True)
        p.setFont(font)
        p.setPen(self.palette().color(QPalette.ColorRole.WindowText))
        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, str(self.value))
        p.end()


class Sparkline(QWidget):
    """Daily counts as a filled line (memories added per day)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.values: list[int] = []
        self.setMinimumHeight(48)

    def set_values(self, values: list[int]) -> None:
        """Show new values, oldest first."""
        self.values = list(values)
        self.update()

    def paintEvent(self, _event: QPaintEvent) -> None:
        """Area under the line, then the line."""
        if len(self.values) < 2:
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        w, h, top = self.width() - 4, self.height() - 6, max(1, max(self.values))
        step = w / (len(self.values) - 1)
        pts = [(2 + i * step, 3 + h - v / top * h) for i, v in enumerate(self.values)]
        line = QPainterPath()
        line.moveTo(*pts[0])
        for x, y in pts[1:]:
            line.lineTo(x, y)
        area = QPainterPath(line)
        area.lineTo(pts[-1][0], 3 + h)
        area.lineTo(pts[0][0], 3 + h)
        colour = accent("blue")
        fill = QColor(colour)
        fill.setAlpha(60)
        p.fillPath(area, fill)
        p.setPen(QPen(colour, 2))
        p.drawPath(line)
        p.end()


class HBars(QWidget):
    """Labelled horizontal bars: (label, fraction 0-1, caption) rows."""

    ROW = 22

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[tuple[str, float, str]] = []
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_rows(self, rows: list[tuple[str, float, str]]) -> None:
        """Replace the bars."""
        self.rows = rows
        self.setFixedHeight(max(1, len(rows)) * self.ROW + 4)
        self.setToolTip("\n".join(f"{label}: {caption}" for label, _f, caption in rows))
        self.update()

    def paintEvent(self, _event: QPaintEvent) -> None:
        """Label column, bar track, filled part, caption."""
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = self.palette().color(QPalette.ColorRole.WindowText)
        track = self.palette().color(QPalette.ColorRole.Midlight)
        label_w = min(180, self.width() // 3)
        metrics = p.fontMetrics()
        # Captions are translated ("mapped (7)", "cartographié (7)"): size the column to the widest.
        caption_w = max([60] + [metrics.horizontalAdvance(c) + 8 for _l, _f, c in self.rows])
        bar_w = max(20, self.width() - label_w - caption_w - 12)
        for i, (label, frac, caption) in enumerate(self.rows):
            y = 2 + i * self.ROW
            p.setPen(text)
            p.drawText(QRectF(0, y, label_w - 6, self.ROW), Qt.AlignmentFlag.AlignVCenter,
                       metrics.elidedText(label, Qt.TextElideMode.ElideMiddle, label_w - 6))
            bar = QRectF(label_w, y + 6, bar_w, self.ROW - 12)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(track)
            p.drawRoundedRect(bar, 4, 4)
            colour = accent("green") if frac >= 0.99 else accent("amber") if frac >= 0.33 else accent("red")
            p.setBrush(colour if frac > 0 else track)
            p.drawRoundedRect(QRectF(bar.x(), bar.y(), max(6.0, bar.width() * frac) if frac > 0 else 0,
                                     bar.height()), 4, 4)
            p.setPen(text)
            p.drawText(QRectF(label_w + bar_w + 8, y, caption_w, self.ROW), Qt.AlignmentFlag.AlignVCenter,
                       caption)
        p.end()
