"""Per-event signal detectors. Each handler does constant work on the scratchpad.

"Constant" means bounded by small fixed windows (the last 5 files for co-access,
the last 5 globs for glob-ignore, the last 40 expected imports, the last 3 open
errors), never by the length of the session. Tool outputs are read only to
measure them (size, error verdict, import names, listed paths); their text
never becomes memory content, because tool outputs are data, not instructions.
"""

from __future__ import annotations

import re
from typing import Any, Final

from desktop.memory.observer import (
    asked_tests,
    lessons,
    project_facts,
    prose_lessons,
    recipes,
    referents,
    shell_escapes,
    shell_strays,
    tool_arguments,
    wrong_places,
)
from desktop.memory.observer.events import Reasoning, ToolCall, ToolResult
from desktop.memory.observer.file_ops import file_operations
from desktop.memory.observer.harness import is_harness_error
from desktop.memory.observer.scratchpad import MAX_FILE_OPS, MAX_SEQUENCE, ErrorStat, FileStat, Scratchpad
from desktop.memory.observer.signals import (
    BACKTRACK,
    CONTEXT_TOKEN_SPIKE,
    DEAD_END,
    ERROR_RETRY,
    EXPLICIT,
    EXTERNAL_REFERENCE,
    IMPORT_CHASE,
    REPEATED_GREP,
    SELF_CORRECTION,
    TIME_ANOMALY,
    Signal,
    error_core,
    error_fingerprint,
    excerpt,
    import_matches,
    imported_names,
    is_config_file,
    is_test_file,
    match_dead_end,
    match_self_correction,
)
from desktop.memory.observer.taint import remember_output, tainted_record
from desktop.memory.observer.tool_names import (
    BASH,
    EDIT,
    EXTERNAL_TOOLS,
    GLOB,
    GREP,
    MULTI_EDIT,
    OTHER,
    READ,
    TODO_WRITE,
    WRITE,
    WRITE_TOOLS,
    plausible_file,
)
from desktop.memory.privacy.boundary import redact_then_cut, redacted_key

BACKTRACK_WINDOW: Final = 20
EXTERNAL_EDIT_WINDOW: Final = 5
IMPORT_CHASE_WINDOW: Final = 6
STEPS_PER_TODO: Final = 4
_RM_OR_MV: Final = re.compile(r"\b(?:rm|mv)\b")
_PATH_LINE: Final = re.compile(r"^\s*(?:\./)?([\w@.+-]+(?:/[\w@.+-]+)*\.\w{1,8})(?::\d+.*)?\s*$")
_MAX_PENDING: Final = 256
NOT_ERRORS: Final = ("doesn't want to proceed", "tool use was rejected", "Sibling tool call errored",
                     "[Request interrupted")


def command_head(command: str) -> str:
    """A short label of a shell command: its program and subcommand (``pytest``, ``git commit``)."""
    words = [w for w in re.split(r"\s+", command.strip()) if w]
    # Skip "cd x &&", env assignments and venv activation: they are setup, not the action.
    for sep in ("&&", ";"):
        if sep in command:
            tail = command.split(sep)[-1].strip()
            if tail:
                words = tail.split()
    words = [w for w in words if "=" not in w or w.startswith("-")]
    if not words:
        return ""
    prog = words[0].rsplit("/", 1)[-1]
    if prog in {"python", "python3", "uv", "poetry", "npx", "npm", "pnpm", "yarn", "cargo", "go", "git",
                "make", "docker"} and len(words) > 1:
        second = words[2] if words[1] in {"-m", "run"} and len(words) > 2 else words[1]
        return f"{prog} {second.rsplit('/', 1)[-1]}"[:40]
    return prog[:40]


def _seq_label(event: ToolCall) -> str:
    if event.tool == BASH:
        return f"Bash:{command_head(str(event.args.get('command', '')))}"
    return event.tool


def touch_file(sp: Scratchpad, path: str, step: int, ts: float, *, edit: bool, write: bool) -> FileStat:
    """Record one access and pair it with the last few distinct files (co-access)."""
    if sp.removed:
        sp.removed.pop(path, None)  # deleted earlier in the session, and back now
    stat = sp.files.get(path)
    if stat is None:
        stat = FileStat(first_step=step, last_step=step, created=write, first_ts=ts)
        sp.files[path] = stat
    if edit:
        stat.edits += 1
    else:
        stat.reads += 1
    stat.last_step = step
    for other, ostep, _ in sp.recent_files:
        if other == path:
            continue
        key = (path, other) if path < other else (other, path)
        rec = sp.pairs.get(key)
        if rec is None:
            rec = [0.0, 0.0, 0.0]
            sp.pairs[key] = rec
        rec[0] += 1
        rec[1] += step - ostep
        rec[2] += 1 if key[0] == other else 0  # how often the first file came first
    if not sp.recent_files or sp.recent_files[-1][0] != path:
        sp.recent_files.append((path, step, ts))
    sp.access_log.append((step, path))
    return stat


def on_tool_call(sp: Scratchpad, ev: ToolCall) -> None:
    """Update analytics for a tool call."""
    step = ev.step
    sp.step = max(sp.step, step)
    tool = ev.tool
    if "record_memory" in ev.raw_tool.lower():
        content = str(ev.args.get("content") or ev.args.get("text") or "").strip()
        # The tool's own "files" argument names what the memory is about (anchoring needs it).
        named = [str(f) for f in ev.args.get("files") or [] if isinstance(f, str) and plausible_file(f)]
        if content:
            sig = Signal(EXPLICIT, f"{EXPLICIT}:{hash(content)}", step, list(dict.fromkeys([*ev.file_paths, *named])),
                         {"content": redact_then_cut(content, 2000), "type": ev.args.get("type")},
                         [excerpt(content)])
            # Words copied from a file, a command's output or a web page are not the agent's own.
            sig.tainted = tainted_record(content, sp.output_shingles, sp.saw_instruction)
            sp.add_signal(sig)
    if tool in EXTERNAL_TOOLS and sp.external_step is None:
        sp.external_step = step  # the trust gate: everything after this is tainted
    label = _seq_label(ev)
    if len(sp.sequence) < MAX_SEQUENCE and (not sp.sequence or sp.sequence[-1] != label):
        sp.sequence.append(label)
    pend: dict[str, Any] = {"tool": tool, "step": step, "ts": ev.timestamp}
    # A folder read as ".", or a tool argument mis-parsed into a path, is not a file to learn about.
    files = [p for p in ev.file_paths if plausible_file(p)]
    if tool != BASH and isinstance(ev.args.get("command"), str):
        # A shell command read as a search or a read (``grep -r``, ``find``): how it ended still says
        # whether a lesson "this command fails / is refused here" holds (contradictions.py).
        pend["shell"] = redact_then_cut(str(ev.args["command"])[:4000], 1000)
    if tool in (READ, GREP, GLOB):  # where it looks: an empty look then a find elsewhere is a lesson
        look = wrong_places.look_of(tool, ev.args, sp.cwd)
        if look is not None:
            pend["look"] = look
    if tool == READ:
        for path in files:
            touch_file(sp, path, step, ev.timestamp, edit=False, write=False)
            _after_read(sp, path, step)
        pend["paths"] = files[:3]
    elif tool in WRITE_TOOLS:
        for path in files:
            _on_edit(sp, ev, path, step)
        referents.on_edit_call(sp, ev.args, pend)
    elif tool in (GREP, GLOB):
        pattern = redact_then_cut(" ".join(str(ev.args.get("pattern", "")).split()), 200)
        if pattern:
            n = sp.grep_counts.get(pattern, 0) + 1
            sp.grep_counts[pattern] = n
            if n == 2:
                sp.add_signal(Signal(REPEATED_GREP, f"{REPEATED_GREP}:{pattern}", step,
                                     list(ev.file_paths[:3]), {"pattern": pattern},
                                     [f"{tool} '{excerpt(pattern, 80)}' repeated"]))
            elif n > 2:
                sp.signals[f"{REPEATED_GREP}:{pattern}"].count = n - 1
                if n == 3:
                    sp.early[REPEATED_GREP] = max(sp.early.get(REPEATED_GREP, 0.0), 0.8)
            pend["pattern"] = pattern
    elif tool == BASH:
        command = str(ev.args.get("command", ""))
        pend["command"] = redact_then_cut(command[:4000], 1000)  # redact first, then cut
        lessons.on_bash_call(sp, ev, pend)
        recipes.on_call(sp, ev, pend)
        referents.on_command_call(sp, pend["command"], pend)
        if _RM_OR_MV.search(command):  # cheap pre-check: most commands delete or move nothing
            ops = file_operations(command, sp.cwd)
            if ops:
                pend["file_ops"] = [ops.removed, ops.moved]
    elif tool == OTHER:
        tool_arguments.on_call(ev.raw_tool, tool, ev.args, pend)
    elif tool == TODO_WRITE and sp.planned_steps is None:
        todos = ev.args.get("todos")
        if isinstance(todos, list) and todos:
            sp.planned_steps = sp.step + len(todos) * STEPS_PER_TODO
    if len(sp.pending) >= _MAX_PENDING:  # results never came (crash, cut transcript)
        sp.pending.pop(next(iter(sp.pending)))
    sp.pending[ev.call_id] = pend


def _apply_file_ops(sp: Scratchpad, ops: list[Any], step: int) -> None:
    removed, moved = ops
    for path in removed:
        if len(sp.removed) < MAX_FILE_OPS:
            sp.removed[path] = step
    for old, new in moved:
        if len(sp.moved) < MAX_FILE_OPS:
            sp.moved.append([old, new])
            sp.removed.pop(new, None)


def _after_read(sp: Scratchpad, path: str, step: int) -> None:
    for glob in sp.globs:
        if path in glob["paths"]:
            glob["read"] += 1
    if is_test_file(path) and sp.first_test_step is None:
        sp.first_test_step = step
    if is_config_file(path):
        sp.config_touched.add(path)
    for origin, name, ostep in sp.expected_imports:
        if origin != path and step - ostep <= IMPORT_CHASE_WINDOW and import_matches(name, path):
            sp.add_signal(Signal(IMPORT_CHASE, f"{IMPORT_CHASE}:{origin}>{path}", step, [origin, path],
                                 {"from": origin, "to": path}, [f"read {origin}, then the {name} it imports"]))
            break


def _on_edit(sp: Scratchpad, ev: ToolCall, path: str, step: int) -> None:
    write = ev.tool == WRITE and path not in sp.files
    touch_file(sp, path, step, ev.timestamp, edit=True, write=write)
    sp.edit_set.add(path)
    lessons.on_edit(sp, ev, path)
    asked_tests.on_edit(sp, path, step, whole_file=ev.tool == WRITE, args=ev.args)
    if is_config_file(path):
        sp.config_touched.add(path)
    if is_test_file(path):
        if sp.first_test_step is None:
            sp.first_test_step = step
    elif sp.first_impl_edit_step is None and ev.tool in (EDIT, MULTI_EDIT):
        sp.first_impl_edit_step = step
    chain = sp.edit_chain.get(path)
    if chain is not None and step - chain[1] <= BACKTRACK_WINDOW and step > chain[1]:
        sp.add_signal(Signal(BACKTRACK, f"{BACKTRACK}:{path}", step, [path],
                             {"branch_start": chain[0], "reedit_step": step, "file": path},
                             [f"{path} re-edited {step - chain[1]} steps after the previous edit"]))
        chain[1] = step
    elif chain is None or step - chain[1] > BACKTRACK_WINDOW:
        sp.edit_chain[path] = [step, step]
    for fp in sp.open_errors:
        err = sp.errors.get(fp)
        if err is not None and path not in err.fix_files and len(err.fix_files) < 3:
            err.fix_files.append(path)
    if sp.external_step is not None and 0 <= step - sp.external_step <= EXTERNAL_EDIT_WINDOW:
        sp.add_signal(Signal(EXTERNAL_REFERENCE, f"{EXTERNAL_REFERENCE}:{path}", step, [path],
                             {"external_step": sp.external_step}, [f"{path} edited right after a web lookup"]))
    if sp.config_touched and len(sp.edit_set) >= 2:
        sp.early.setdefault("config_touch", 0.7)


def on_tool_result(sp: Scratchpad, ev: ToolResult) -> None:
    """Errors, retries and resolutions; timing; output size; listed paths."""
    pend = sp.pending.pop(ev.call_id, None) or {}
    tool = pend.get("tool", ev.tool)
    step = ev.step
    if ev.duration_ms is not None:
        _timing(sp, tool, float(ev.duration_ms), ev, pend)
    if ev.output and remember_output(sp.output_shingles, ev.output):
        sp.saw_instruction = True
    # The harness's own protocol errors (edit before read, string not found, a rejected call)
    # say nothing about the project: they are neither errors to learn nor failures to fix.
    harness = ev.is_error and is_harness_error(ev.output, sp.agent)
    if tool == BASH:
        lessons.on_bash_result(sp, ev, pend, harness=harness)
        if not harness:
            recipes.on_result(sp, ev, pend)
            project_facts.on_command(sp, ev, pend)
    shell_strays.on_result(sp, ev, pend)
    if tool == BASH:
        shell_escapes.on_result(sp, ev, pend)
    # Before the harness check: a call the user declined, in their words, is this lesson's evidence.
    tool_arguments.on_result(sp, pend, ev.output, ev.is_error, step, ev.event_key)
    if "look" in pend:  # before the harness check: "File does not exist" is the lesson here
        wrong_places.on_look_result(sp, pend["look"], ev.output, ev.is_error, step, ev.event_key)
    if harness:
        return
    if ev.is_error:
        _on_error(sp, ev, tool, pend, step)
        return
    _resolve(sp, tool, pend, step)
    if "shell" in pend:
        lessons.note_success(sp, str(pend["shell"]))
    referents.on_result(sp, pend)  # an edit or a command that went through: what it named counts
    if "file_ops" in pend:  # only a command that succeeded deleted or moved anything
        _apply_file_ops(sp, pend["file_ops"], step)
    if tool in (GREP, GLOB) and pend.get("pattern"):
        paths = set()
        for line in ev.output[:20_000].splitlines()[:400]:
            m = _PATH_LINE.match(line)
            if m:
                paths.add(m.group(1))
        if paths:
            if len(sp.globs) == sp.globs.maxlen:
                _judge_glob(sp, sp.globs[0])
            sp.globs.append({"pattern": pend["pattern"], "paths": paths, "read": 0, "step": step})
    elif tool == READ:
        size = len(ev.output)
        for path in pend.get("paths", [])[:1]:
            stat = sp.files.get(path)
            if stat is not None:
                stat.read_chars += size
            if sp.read_count >= 5 and size >= 8000 and size > 4 * (sp.read_chars_total / sp.read_count):
                sp.add_signal(Signal(CONTEXT_TOKEN_SPIKE, f"{CONTEXT_TOKEN_SPIKE}:{path}", step, [path],
                                     {"chars": size}, [f"reading {path} returned {size} characters"]))
            for name in imported_names(ev.output, 12):
                sp.expected_imports.append((path, name, step))
        sp.read_chars_total += size
        sp.read_count += 1


def _judge_glob(sp: Scratchpad, glob: dict[str, Any]) -> None:
    """A search whose many results were almost all ignored (glob-ignore)."""
    n = len(glob["paths"])
    if n >= 10 and glob["read"] / n < 0.1:
        pattern = glob["pattern"]
        sp.add_signal(Signal("glob_ignore", f"glob_ignore:{pattern}", int(glob["step"]), [],
                             {"pattern": pattern, "results": n, "read": glob["read"]},
                             [f"'{excerpt(pattern, 60)}' listed {n} files, {glob['read']} read"]))


def _timing(sp: Scratchpad, tool: str, dur: float, ev: ToolResult, pend: dict[str, Any]) -> None:
    rec = sp.durations.setdefault(tool, [0.0, 0.0])
    if rec[0] >= 5 and dur > 5 * rec[1] and dur > 5000:
        label = pend.get("command") or tool
        sp.add_signal(Signal(TIME_ANOMALY, f"{TIME_ANOMALY}:{ev.call_id}", ev.step, list(pend.get("paths", [])),
                             {"ms": dur, "mean_ms": rec[1], "error": ev.is_error, "label": str(label)[:120]},
                             [f"{excerpt(str(label), 80)} took {dur / 1000:.1f}s"]))
    rec[0] += 1
    rec[1] += (dur - rec[1]) / rec[0]


def _on_error(sp: Scratchpad, ev: ToolResult, tool: str, pend: dict[str, Any], step: int) -> None:
    if any(marker in ev.output[:300] for marker in NOT_ERRORS):
        return  # the user declined or a sibling call failed: not a fact about the code
    fp = error_fingerprint(tool, ev.output)
    err = sp.errors.get(fp)
    if err is None:
        err = ErrorStat(tool, error_core(ev.output), 1, step, step, str(pend.get("command", ""))[:300])
        sp.errors[fp] = err
        if len(sp.errors) >= 2:
            sp.early[ERROR_RETRY] = max(sp.early.get(ERROR_RETRY, 0.0), 0.75)
    else:
        err.count += 1
        err.last_step = step
        err.resolved_how = None
        sp.add_signal(Signal(ERROR_RETRY, f"{ERROR_RETRY}:{fp}", step, list(pend.get("paths", [])),
                             {"fingerprint": fp, "tool": tool}, [excerpt(err.message, 120)]))
    if fp not in sp.open_errors:
        sp.open_errors.append(fp)


def _resolve(sp: Scratchpad, tool: str, pend: dict[str, Any], step: int) -> None:
    """The first success of the same kind of call after an error is how it was resolved."""
    if not sp.open_errors:
        return
    command = str(pend.get("command", ""))
    for fp in list(sp.open_errors):
        err = sp.errors.get(fp)
        if err is None:
            sp.open_errors.remove(fp)
            continue
        if err.tool != tool or (tool == BASH and command_head(command) != command_head(err.command)):
            continue
        parts = []
        if err.fix_files:
            parts.append("editing " + ", ".join(err.fix_files))
        if tool == BASH and command and command != err.command:
            parts.append(f"running `{excerpt(command, 100)}` instead")
        err.resolved_how = " and ".join(parts) if parts else "retrying"
        err.resolved_step = step
        sp.open_errors.remove(fp)


def on_reasoning(sp: Scratchpad, ev: Reasoning) -> None:
    """Self-correction and dead-end language in the agent's own prose."""
    text = ev.text
    if len(text) < 12:
        return
    prose_lessons.on_agent_text(sp, ev)
    last_file = [sp.recent_files[-1][0]] if sp.recent_files else []
    sentence = match_self_correction(text)
    if sentence:
        sp.self_corrections += 1
        sp.add_signal(Signal(SELF_CORRECTION, f"{SELF_CORRECTION}:{redacted_key(sentence, 80)}", ev.step,
                             last_file, {"sentence": sentence}, [sentence]))
        sp.early[SELF_CORRECTION] = 0.95 if sp.self_corrections >= 3 else 0.9
    dead = match_dead_end(text)
    if dead:
        sp.add_signal(Signal(DEAD_END, f"{DEAD_END}:{redacted_key(dead, 80)}", ev.step, last_file,
                             {"sentence": dead, "origin": "language"}, [dead]))
