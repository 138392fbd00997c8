"""Files named at a session start only with their evidence, and only when that list has predicted
this project's sessions better than "the previous session's files" (issue 25, item 4)."""

from __future__ import annotations

import random

from desktop.memory.observer.start_files import MIN_SCORED, WINDOW, StartFiles, frequent, start_files, worth_saying
from desktop.memory.stats import sign_test, wilson_interval
from desktop.memory.store.database import Database
from desktop.memory.store.writer import FnOp


def _sessions(db: Database, history: list[set[str]]) -> None:
    def write(tx):  # type: ignore[no-untyped-def]
        for i, files in enumerate(history):
            sid = f"s{i:03d}"
            tx.execute("INSERT INTO session_metrics(session_id, agent, started_at) VALUES (?, 'claude-code', ?)",
                       (sid, f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z"))
            tx.conn.executemany("INSERT INTO observer_session_files(session_id, file_path) VALUES (?, ?)",
                                [(sid, f) for f in files])
    db.writer.run(FnOp("sessions", write))


def test_a_core_every_session_reads_beats_the_previous_sessions_scatter(db: Database) -> None:
    rng = random.Random(7)
    core = {"src/app.py", "src/models.py", "tests/test_app.py"}
    history = [core | {f"src/feature{rng.randrange(400)}.py" for _ in range(12)} for _ in range(WINDOW + 25)]
    _sessions(db, history)
    out = start_files(db.reads.conn())
    assert out.scored >= MIN_SCORED and out.p_value < 0.05 and out.list_precision > out.baseline_precision
    assert {f.path for f in out.files} == core
    assert all(f.sessions == WINDOW and f.window == WINDOW for f in out.files)


def test_a_list_ahead_of_a_weak_baseline_but_mostly_unread_is_not_said() -> None:
    """Ahead of "the previous session's files" by the sign test, but the next session read only a
    third of what it named (the replayed entire-cli at its end: 31 % against 6 %): nothing is said."""
    ahead = StartFiles(scored=20, list_precision=0.31, baseline_precision=0.06, wins=15, losses=2,
                       p_value=sign_test(15, 2))
    assert ahead.p_value < 0.05 and not worth_saying(ahead)
    assert worth_saying(StartFiles(scored=20, list_precision=0.62, baseline_precision=0.3, wins=15, losses=2,
                                   p_value=sign_test(15, 2)))


def test_no_pattern_means_nothing_is_said(db: Database) -> None:
    rng = random.Random(3)
    history = [{f"src/f{rng.randrange(30)}.py" for _ in range(8)} for _ in range(WINDOW + 25)]
    _sessions(db, history)
    assert start_files(db.reads.conn()).files == []


def test_too_few_sessions_means_nothing_is_said(db: Database) -> None:
    _sessions(db, [{"src/app.py"} for _ in range(WINDOW + MIN_SCORED - 1)])
    assert start_files(db.reads.conn()).files == []


def test_frequent_needs_the_whole_window() -> None:
    assert frequent([{"a.py"}] * (WINDOW - 1)) == []
    assert [f.path for f in frequent([{"a.py", "b.py"}] * WINDOW)] == ["a.py", "b.py"]


def test_stats() -> None:
    low, high = wilson_interval(1, 2)
    assert low < 0.5 < high
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert abs(sign_test(8, 0) - 1 / 256) < 1e-12 and sign_test(0, 0) == 1.0
