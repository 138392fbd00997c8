"""Trust and control for one project: trust level, write policy, auto-memory, promotion preset.

Advancement follows the design's thresholds and is proposed, not imposed: the
next level is enabled when earned (Cautious -> Standard, Standard -> Confident),
Confident and Autonomous need an explicit acknowledgement, and a step back is
offered after several flagged memories in one session -- never forced.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QMessageBox,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from desktop.memory.preferences import PRESET_NAMES, WRITE_POLICIES, ProjectPrefs
from desktop.ui import trust
from desktop.ui.tr_noop import QT_TRANSLATE_NOOP

POLICY_NAMES = {
    "off": QT_TRANSLATE_NOOP("TrustPanel", "Off — agents neither read nor write memory"),
    "read_only": QT_TRANSLATE_NOOP("TrustPanel", "Read-only — agents use memory but never add to it"),
    "confirm_each": QT_TRANSLATE_NOOP("TrustPanel", "Confirm each — new memories wait for your OK"),
    "automatic": QT_TRANSLATE_NOOP("TrustPanel", "Automatic — saved at once, quarantined until reviewed"),
}
PRESET_WORDS = {
    "conservative": QT_TRANSLATE_NOOP("TrustPanel", "Conservative — promote only strong, repeated signals"),
    "balanced": QT_TRANSLATE_NOOP("TrustPanel", "Balanced — the default thresholds"),
    "eager": QT_TRANSLATE_NOOP("TrustPanel", "Eager — promote more, review more"),
}


class TrustPanel(QWidget):
    """Edits a ProjectPrefs in place; `changed` fires after each edit the user makes."""

    changed = Signal()

    def __init__(self, prefs: ProjectPrefs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.prefs = prefs
        levels = QGroupBox(self.tr("Trust level"))
        col = QVBoxLayout(levels)
        self.level_group = QButtonGroup(self)
        self.level_radios: list[QRadioButton] = []
        for lv in trust.LEVELS:
            radio = QRadioButton(f"{lv.number}. {trust.level_name(lv.number)}")
            radio.setObjectName(f"trustLevel{lv.number}")
            radio.setToolTip(trust.level_description(lv.number))
            self.level_group.addButton(radio, lv.number)
            self.level_radios.append(radio)
            col.addWidget(radio)
        self.level_help = QLabel()
        self.level_help.setWordWrap(True)
        self.progress = QLabel()
        self.progress.setObjectName("trustProgress")
        self.progress.setWordWrap(True)
        col.addWidget(self.level_help)
        col.addWidget(self.progress)

        self.policy = QComboBox()
        self.policy.setObjectName("writePolicy")
        for key in WRITE_POLICIES:
            self.policy.addItem(QCoreApplication.translate("TrustPanel", POLICY_NAMES[key]), key)
        self.auto_memory = QCheckBox(self.tr("Let Engram learn from sessions automatically (auto-memory)"))
        self.auto_memory.setObjectName("autoMemory")
        self.auto_memory.setToolTip(self.tr("When off, only what you teach is remembered"))
        self.preset = QComboBox()
        self.preset.setObjectName("promotionPreset")
        for key in PRESET_NAMES:
            self.preset.addItem(QCoreApplication.translate("TrustPanel", PRESET_WORDS[key]), key)
        form = QFormLayout()
        form.addRow(self.tr("&Write policy"), self.policy)
        form.addRow("", self.auto_memory)
        form.addRow(self.tr("&Promotion"), self.preset)
        layout = QVBoxLayout(self)
        layout.addWidget(levels)
        layout.addLayout(form)
        layout.addStretch(1)
        self._load()
        self.level_group.idClicked.connect(self._level_clicked)
        self.policy.currentIndexChanged.connect(self._edited)
        self.auto_memory.toggled.connect(self._edited)
        self.preset.currentIndexChanged.connect(self._edited)

    def _load(self) -> None:
        p = self.prefs
        self.level_group.button(p.trust_level).setChecked(True)
        self.policy.setCurrentIndex(max(0, self.policy.findData(p.write_policy)))
        self.auto_memory.setChecked(p.auto_memory)
        self.preset.setCurrentIndex(max(0, self.preset.findData(p.promotion_preset)))
        self._describe()

    def _describe(self) -> None:
        p = self.prefs
        self.level_help.setText(trust.level_description(p.trust_level))
        # Lower levels are always open (regression is the user's call); the next level opens when
        # earned, and Autonomous only from Confident, by explicit opt-in.
        for radio in self.level_radios:
            n = self.level_group.id(radio)
            radio.setEnabled(n <= p.trust_level or (n == p.trust_level + 1 and trust.can_advance(p))
                             or (n == 4 and p.trust_level == 3))
        if p.trust_level == 1:
            text = self.tr("To reach Standard: 3 sessions (%1 so far) and half of the new memories "
                           "confirmed (%2% so far).").replace("%1", str(p.sessions)).replace(
                "%2", str(round(trust.confirmed_ratio(p) * 100)))
        elif p.trust_level == 2:
            text = self.tr("To reach Confident: 10 sessions (%1 so far), under 5% corrected (%2%) and at "
                           "least one correction made.").replace("%1", str(p.sessions)).replace(
                "%2", str(round(trust.correction_rate(p) * 100)))
        else:
            text = self.tr("Higher levels are only ever chosen by you.")
        if trust.can_advance(p):
            text = self.tr("This project has earned the next level. Choose it above when you are ready.")
        self.progress.setText(text)

    def _level_clicked(self, number: int) -> None:
        if number > self.prefs.trust_level and trust.needs_acknowledgement(number):
            answer = QMessageBox.question(
                self, self.tr("Raise the trust level?"),
                self.tr("At %1, agents receive memories down to %2 confidence and you see less of the "
                        "session summary. You can go back at any time. Continue?")
                .replace("%1", trust.level_name(number)).replace("%2", f"{trust.level(number).min_confidence:.2f}"))
            if answer != QMessageBox.StandardButton.Yes:
                self.level_group.button(self.prefs.trust_level).setChecked(True)
                return
        self.prefs.trust_level = number
        self._describe()
        self.changed.emit()

    def _edited(self) -> None:
        self.prefs.write_policy = self.policy.currentData()
        self.prefs.auto_memory = self.auto_memory.isChecked()
        self.prefs.promotion_preset = self.preset.currentData()
        self.changed.emit()


def offer_regression(parent: QWidget | None, prefs: ProjectPrefs, flags: int) -> bool:
    """Ask (never force) whether to step back one trust level; True when the user agreed."""
    lower = max(1, prefs.trust_level - 1)
    answer = QMessageBox.question(
        parent, QCoreApplication.translate("TrustPanel", "Step back to a more careful level?"),
        QCoreApplication.translate(
            "TrustPanel", "You flagged %1 memories as wrong in this session. Move this project from %2 "
                          "to %3, so agents get only surer memories? Nothing changes unless you agree.")
        .replace("%1", str(flags)).replace("%2", trust.level_name(prefs.trust_level))
        .replace("%3", trust.level_name(lower)))
    if answer == QMessageBox.StandardButton.Yes:
        prefs.trust_level = lower
        return True
    prefs.regression_declined_at = prefs.sessions
    return False
