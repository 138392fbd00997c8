"""Memory panel tabs: health dashboard, module map with impact, browser filters/why/history, Ask Memory."""

from __future__ import annotations

from ui_helpers import seed

from desktop.memory.store.memory_ops import NewMemory
from desktop.ui.adapters.health import coverage_level, health_score
from desktop.ui.panel.charts import HBars, ScoreRing, Sparkline


def _index(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    win.graph.index()


def test_dashboard_numbers_charts_feed_and_attention(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    _index(qtbot, win)
    seed(win, extra=[NewMemory(content="cart totals are recomputed each request", type="pattern",
                               needs_review=True, related_files=["shop/cart.py"])])
    dash = win.panel.dashboard
    dash.refresh()
    qtbot.waitUntil(lambda: dash.health is not None and dash.health.total == 8, timeout=5000)
    h = dash.health
    assert dash.total.value.text() == "8" and dash.review.value.text() == "1"
    assert h.active_30d == 8 and 0 < h.score <= 100 and dash.ring.value == h.score
    assert sum(h.daily) == 8 and len(h.daily) == 14
    assert any(m.memories > 0 for m in h.modules)
    assert dash.attention.count() == 1 and "needs review" in dash.attention.item(0).text()
    assert dash.activity.count() >= 8 and "added" in dash.activity.item(0).text()
    qtbot.waitUntil(lambda: dash.effect is not None, timeout=5000)
    assert dash.effect.compare("steps") is None and dash.effect_tile.value.text() == "—"  # no A/B sessions yet
    assert dash.effect_tile.detail.text() == "Not enough sessions yet"
    for widget in (dash.ring, dash.spark, dash.types, dash.coverage):
        assert not widget.grab().isNull()              # the QPainter charts paint


def test_memory_effect_tile_says_whether_a_difference_is_beyond_chance(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    """Three sessions a side (what once read "+167 % steps"): means, both sample sizes, and no claim."""
    from desktop.agents.metrics import save_metrics

    dash = win.panel.dashboard
    for i, (control, full) in enumerate(((3, 8), (4, 9), (2, 7))):
        save_metrics(win.project.db, f"c{i}", "engram", "control", {"steps": control}, outcome="success").result(10)
        save_metrics(win.project.db, f"f{i}", "engram", "full", {"steps": full}, outcome="success").result(10)
    dash.effect = None
    dash.refresh()
    qtbot.waitUntil(lambda: dash.effect is not None, timeout=5000)
    assert dash.effect_tile.value.text() == "8.0 / 3.0"
    assert dash.effect_tile.detail.text() == "n = 3 / 3 · p = 0.10: no difference distinguishable from chance"
    for i in range(3, 12):
        save_metrics(win.project.db, f"c{i}", "engram", "control", {"steps": 3}, outcome="success").result(10)
        save_metrics(win.project.db, f"f{i}", "engram", "full", {"steps": 8}, outcome="success").result(10)
    dash.effect = None
    dash.refresh()
    qtbot.waitUntil(lambda: dash.effect is not None, timeout=5000)
    assert dash.effect_tile.detail.text().startswith("n = 12 / 12 · p = 0.00: a difference beyond chance")


def test_health_score_and_coverage_levels() -> None:
    from desktop.ui.adapters.health import Health, ModuleCoverage

    assert [coverage_level(n) for n in (0, 1, 3, 6)] == ["unknown", "shallow", "partial", "mapped"]
    h = Health(total=10, avg_confidence=0.9, modules=[ModuleCoverage("a", 3, 6, "mapped")])
    assert health_score(h) == 90
    h.needs_review = 10
    assert health_score(h) == 45
    assert health_score(Health()) == 0


def test_charts_paint_in_any_size(qtbot) -> None:  # type: ignore[no-untyped-def]
    ring, spark, bars = ScoreRing(), Sparkline(), HBars()
    for w in (ring, spark, bars):
        qtbot.addWidget(w)
    ring.set_value(140)
    assert ring.value == 100
    spark.set_values([0, 3, 1])
    bars.set_rows([("a", 0.0, "0"), ("b", 1.0, "9")])
    for w in (ring, spark, bars):
        w.resize(200, 60)
        assert not w.grab().isNull()


def test_module_map_cards_and_impact(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    _index(qtbot, win)
    seed(win)
    mm = win.panel.modules
    win.panel.setCurrentWidget(mm)
    qtbot.waitUntil(lambda: len(mm.cards) > 0, timeout=5000)
    assert any("memories" in mm.summary.text() or "modules" in mm.summary.text() for _ in [0])
    card = mm.cards[0]
    assert card.files.count() > 0 and not card.files.isVisible()
    card.toggle.setChecked(True)
    assert card.files.isVisibleTo(card)
    mm.target.setText("shop/models.py")
    mm.run_impact()
    qtbot.waitUntil(lambda: mm.impact.topLevelItemCount() > 0, timeout=5000)
    assert "may be affected" in mm.impact_summary.text()
    mm.target.setText("no/such/file.py")
    mm.run_impact()
    qtbot.waitUntil(lambda: "Not in the code graph" in mm.impact_summary.text(), timeout=5000)


def test_browser_filters_why_retrieved_and_history(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    ids = seed(win, extra=[NewMemory(content="Cart discount codes are case-insensitive", type="gotcha",
                                     source="imported", scope="module")])
    b = win.browser
    win.panel.setCurrentWidget(b)
    qtbot.waitUntil(lambda: b.model.rowCount() == 8, timeout=5000)
    b.source_filter.setCurrentIndex(b.source_filter.findData("imported"))
    qtbot.waitUntil(lambda: b.model.rowCount() == 1, timeout=5000)
    b.source_filter.setCurrentIndex(0)
    b.scope_filter.setCurrentIndex(b.scope_filter.findData("module"))
    qtbot.waitUntil(lambda: b.model.rowCount() == 1, timeout=5000)
    b.scope_filter.setCurrentIndex(0)
    win.project.memories.edit(ids[0], {"content": "Discounts are applied before tax in cart.py, per line"}).result()
    b.search.setText("discount")
    qtbot.waitUntil(lambda: b.model.row_of(ids[0]) is not None and b.model.rowCount() == 2, timeout=5000)
    b.table.selectRow(b.model.row_of(ids[0]))
    # The first search in a process loads the embedding model; give a cold, busy CI machine room.
    qtbot.waitUntil(lambda: "Why was this retrieved" in b.detail.toPlainText(), timeout=30_000)
    text = b.detail.toPlainText()
    for word in ("Provenance", "Source", "Keyword match", "Confidence", "Total", "History", "edited", "per line"):
        assert word in text, word


def test_open_memory_from_anywhere_selects_it_in_browser(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    ids = seed(win)
    b = win.browser
    b.search.setText("nothing matches this")
    qtbot.waitUntil(lambda: b.model.rowCount() == 0, timeout=5000)
    win.open_memory(ids[3])
    assert win.panel.currentWidget() is b
    qtbot.waitUntil(lambda: b.selected() is not None and b.selected().id == ids[3], timeout=5000)


def test_ask_memory_without_llm_shows_ranked_citations(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    seed(win)
    ask = win.panel.ask
    ask.question.setText("how is money stored")
    ask.ask()
    qtbot.waitUntil(lambda: ask.answer is not None, timeout=5000)
    assert not ask.answer.used_llm and ask.answer.hits
    assert ask.answer.hits[0].memory.content.startswith("Money is stored")
    assert "No language model" in ask.note.text() and "memory:" in ask.view.toHtml()
    opened = []
    ask.open_memory.disconnect()
    ask.open_memory.connect(opened.append)
    from PySide6.QtCore import QUrl

    ask.view.anchorClicked.emit(QUrl(f"memory:{ask.answer.hits[0].memory.id}"))
    assert opened == [ask.answer.hits[0].memory.id]


def test_browser_shows_what_a_learned_memory_came_from(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    from desktop.memory.observer.events import SessionEnd, SessionStart, UserMessage
    from desktop.memory.observer.ingest import Ingestor
    from desktop.memory.observer.novelty import HashingEmbedder, Novelty
    from desktop.memory.observer.promotion import Promoter

    rule = "Never run the migrations against `db/prod.sqlite`, copy it to `db/dev.sqlite` first."
    ing = Ingestor(win.project.db, Promoter(win.project.db, novelty=Novelty(HashingEmbedder())))
    ing.learn_events([SessionStart("sess-42", "claude-code", "/proj", None, "interactive", 1.0, None),
                      UserMessage("sess-42", 0, rule, 2.0), SessionEnd("sess-42", "unknown", 3.0)])
    (mid,) = [r[0] for r in win.project.db.reads.conn().execute(
        "SELECT id FROM memories WHERE deprecated = 0 AND content LIKE '%prod.sqlite%'")]
    b = win.browser
    win.open_memory(mid)
    qtbot.waitUntil(lambda: "Evidence" in b.detail.toPlainText(), timeout=10_000)
    text = b.detail.toPlainText()
    for word in ("Sessions it was learned from: 1", "sess-42", "your instruction", "linked events: 1",
                 "db/prod.sqlite"):
        assert word in text, word


def test_team_status_is_polled_only_while_the_dashboard_shows(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    dash, calls = win.panel.dashboard, []
    dash.refresh_team = lambda: calls.append(1)  # type: ignore[method-assign]
    win.panel.setCurrentWidget(win.browser)
    dash._poll_team()
    assert calls == []
    win.panel.setCurrentWidget(dash)  # showing it refreshes at once...
    shown = len(calls)
    dash._poll_team()  # ...and the poll goes on while it shows
    assert shown >= 1 and len(calls) == shown + 1


def test_activity_feed_lists_what_happened_to_memories_not_upkeep(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    seed(win, extra=[NewMemory(content="cart totals are recomputed each request", related_files=["shop/cart.py"])])
    win.project.anchors.wait_idle()  # the anchoring batch is in the audit log now
    assert win.project.memories.audit_log(actions=["anchor"])
    dash = win.panel.dashboard
    dash.refresh()
    qtbot.waitUntil(lambda: dash.activity.count() >= 8, timeout=5000)
    texts = [dash.activity.item(i).text() for i in range(dash.activity.count())]
    assert not [t for t in texts if t.endswith("anchor")] and "added" in texts[0]
