"""Citation chips: an amber pill per memory an agent cited (red for dead ends), each with a flag.

More than five chips fold into one "Used N memories" button that unfolds them, so a
long answer is not buried under its sources. The flag is the one-click way to say
"this memory is wrong" at the point of damage.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QRect, QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent, QMouseEvent, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLayoutItem,
    QToolButton,
    QWidget,
    QWidgetItem,
)

from desktop.ui.theme import accent, css, icon

FOLD_AFTER = 5


class FlowLayout(QLayout):
    """Lays widgets out left to right, wrapping to new lines (chips in a narrow panel)."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 6) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self.setSpacing(spacing)
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:
        """Qt: append an item."""
        self._items.append(item)

    def count(self) -> int:
        """Qt: number of items."""
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        """Qt: item at index."""
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        """Qt: remove and return an item."""
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def hasHeightForWidth(self) -> bool:
        """Height depends on the width (wrapping)."""
        return True

    def heightForWidth(self, width: int) -> int:
        """Height needed at `width`."""
        return self._place(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:
        """Qt: place the items."""
        super().setGeometry(rect)
        self._place(rect, apply=True)

    def sizeHint(self) -> QSize:
        """Qt: preferred size."""
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        """Qt: the widest item."""
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        return size

    def _place(self, rect: QRect, *, apply: bool) -> int:
        x, y, line = rect.x(), rect.y(), 0
        for item in self._items:
            if isinstance(item, QWidgetItem) and (widget := item.widget()) is not None and widget.isHidden():
                continue
            hint = item.sizeHint()
            if x + hint.width() > rect.right() and line > 0:
                x, y, line = rect.x(), y + line + self.spacing(), 0
            if apply:
                item.setGeometry(QRect(x, y, hint.width(), hint.height()))
            x += hint.width() + self.spacing()
            line = max(line, hint.height())
        return y + line - rect.y()


class CitationChip(QFrame):
    """One cited memory: "#12 · brief text" and a flag button."""

    flag_clicked = Signal(int)
    open_clicked = Signal(int)

    def __init__(self, memory_id: int, brief: str, *, dead_end: bool = False, shared_by: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.memory_id = memory_id
        self.dead_end = dead_end
        self.brief = brief
        self.shared_by = shared_by
        self.setObjectName("citationChip")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setProperty("deadEnd", dead_end)
        link = css(self.palette().color(QPalette.ColorRole.WindowText))
        self.label = QLabel(f"<a href='open' style='text-decoration:none; color:{link}'><b>#{memory_id}</b></a>"
                            f" · {html.escape(brief)}")
        # The whole chip is the link (a click on its text or padding opens the memory), so the label
        # lets clicks through; the keyboard reaches it as one focusable chip (Enter or Space opens it).
        self.label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName(self.tr("Open memory #%1").replace("%1", str(memory_id)))
        self.flag = QToolButton()
        self.flag.setObjectName("chipButton")
        self.flag.setIcon(icon("flag", accent("red" if dead_end else "amber")))
        self.flag.setToolTip(self.tr("This memory is wrong — correct it"))
        self.flag.setAccessibleName(self.tr("Flag memory #%1 as wrong").replace("%1", str(memory_id)))
        self.flag.clicked.connect(lambda: self.flag_clicked.emit(self.memory_id))
        self.setToolTip((self.tr("Dead end: an approach tried before and abandoned") if dead_end
                         else self.tr("Memory the agent used")) + f"\n#{memory_id}: {brief}"
                        + ("\n" + self.tr("Shared by %1").replace("%1", shared_by) if shared_by else ""))
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 1, 2, 1)
        row.setSpacing(2)
        row.addWidget(self.label)
        row.addWidget(self.flag)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        """A click anywhere on the chip's body opens the memory (the flag button keeps its own click)."""
        if event.button() == Qt.MouseButton.LeftButton and self.rect().contains(event.position().toPoint()):
            self.open_clicked.emit(self.memory_id)
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter or Space on a focused chip opens its memory."""
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.open_clicked.emit(self.memory_id)
            return
        super().keyPressEvent(event)


class CitationBar(QWidget):
    """The chips of one answer; folds into "Used N memories" past five."""

    flag_clicked = Signal(int)
    open_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.flow = FlowLayout(self)
        self.chips: dict[int, CitationChip] = {}
        self.fold_button = QToolButton()
        self.fold_button.setObjectName("foldCitations")
        self.fold_button.setCheckable(True)
        self.fold_button.toggled.connect(self._set_unfolded)
        self.fold_button.hide()
        self.flow.addWidget(self.fold_button)

    def clear(self) -> None:
        """Remove every chip."""
        for chip in self.chips.values():
            self.flow.removeWidget(chip)
            chip.deleteLater()
        self.chips.clear()
        self.fold_button.setChecked(False)
        self._refold()

    def add(self, memory_id: int, brief: str, *, dead_end: bool = False, shared_by: str = "") -> None:
        """Add a chip (once per memory); `shared_by` names the teammate a team memory came from."""
        if memory_id in self.chips:
            return
        chip = CitationChip(memory_id, brief, dead_end=dead_end, shared_by=shared_by, parent=self)
        chip.flag_clicked.connect(self.flag_clicked)
        chip.open_clicked.connect(self.open_clicked)
        self.chips[memory_id] = chip
        self.flow.addWidget(chip)
        self._refold()

    def entries(self) -> list[tuple[int, str, bool, str]]:
        """(memory id, brief, dead end, shared by) of each chip, in order (to rebuild the bar)."""
        return [(mid, c.brief, c.dead_end, c.shared_by) for mid, c in self.chips.items()]

    def folded(self) -> bool:
        """True while the chips are hidden behind "Used N memories"."""
        return len(self.chips) > FOLD_AFTER and not self.fold_button.isChecked()

    def _set_unfolded(self, _on: bool) -> None:
        self._refold()

    def _refold(self) -> None:
        n = len(self.chips)
        fold = self.folded()
        self.fold_button.setVisible(n > FOLD_AFTER)
        self.fold_button.setText(self.tr("Hide memories") if self.fold_button.isChecked()
                                 else self.tr("Used %n memories", "", n))
        self.fold_button.setToolTip(self.tr("Show every memory this answer cited"))
        for chip in self.chips.values():
            chip.setVisible(not fold)
        self.updateGeometry()


def chip_html(memory_id: int, brief: str, dead_end: bool) -> str:
    """Inline rich-text rendering of a citation inside streamed output."""
    fg = css(accent("red" if dead_end else "amber"))
    bg = css(accent("red_bg" if dead_end else "amber_bg"))
    return (f"<a href='memory:{memory_id}' style='text-decoration:none; color:{fg}; background:{bg}'>"
            f"&nbsp;#{memory_id} · {html.escape(brief)}&nbsp;</a>")
