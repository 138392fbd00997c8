"""Memory lifecycle: decay, pruning, feedback, staleness, conflicts, privacy and portability.

Public entry points (plain Python, no Qt):

- ``decay.decayed_confidence(confidence, half_life_days, last_accessed_at, pinned, now)``
  (or ``decayed_confidence(memory, now)``) and ``decay.DECAYED_SQL``.
- ``pruning.prune(db)``, ``pruning.prune_when_idle(db)``, ``pruning.PruneOp``.
- ``feedback.record_use(db, used, answer_text=...)``, ``feedback.flag_wrong(db, id)``.
- ``staleness.anchor_memory``, ``staleness.check_staleness``, ``staleness.injection_policy``.
- ``conflicts.detect_conflicts`` / ``texts_conflict``; ``conflict_store.check_on_write``,
  ``conflict_groups``, ``resolve_conflict``, ``supersession_chain``; ``conflict_store.ConflictWatcher``.
- ``redaction.redact_for_output``; ``emergency.emergency_delete``; ``control.delete_all``,
  ``control.gate_items`` (the auto-memory preference and candidate quarantine).
- ``portable.export_json`` / ``import_json``; ``formats.export_markdown`` / ``managed_block``;
  ``formats.import_path``; ``audit.read_audit`` / ``export_audit``.
"""
