"""Entry point of the frozen Engram app (PyInstaller builds start here, not in main.py).

It adds three things around :func:`desktop.ui.app.main`, all before Qt is touched:

* **A system-library check.** When Qt's platform plugin cannot load (for example
  ``libxcb-cursor0`` is missing), Qt prints a cryptic line and *aborts* the process,
  which Python cannot catch. So on Linux the libraries the chosen platform plugin
  needs are looked up first, and an ``ImportError`` from PySide6 itself (e.g.
  ``libEGL.so.1: cannot open shared object file``) is caught; either way the user
  gets one clear message naming the apt packages to install, also written to the
  user-data folder's ``logs/`` and shown in a desktop dialog when a tool for that
  exists, and the process exits with status 3.
* **``--smoke-test``**: checks every bundled part of a build (see ``smoke_test``)
  and prints a JSON report; exit status 0 only when every check passed.
* **Start-up probes for the benchmark** through ``ENGRAM_STARTUP_PROBE``:
  ``window`` prints the time to the first shown main window and quits;
  ``idle:SECONDS`` waits for the project given on the command line to open, idles
  for SECONDS, prints the resident memory and quits.

The same file runs from the source tree (``python packaging/engram_entry.py``), so
the smoke test can be tried without building.
"""

from __future__ import annotations

import time

# Taken first so the probe measures as much of the start-up as Python can see.
_T0 = time.perf_counter()

import sys  # noqa: E402

if __name__ == "__main__" and sys.argv[1:2] == ["--cli"]:
    # An agent's hook (on every tool call), the warm service or the MCP server: the command line at
    # once, before this module's GUI-side imports below (a hook's lean client imports ~nothing).
    from desktop.cli.main import main as _cli_main

    sys.exit(_cli_main(sys.argv[2:]))

import ctypes.util  # noqa: E402 - after the clock on purpose
import glob  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import asdict, dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

log = logging.getLogger("engram.packaging")

EXIT_MISSING_LIBRARY = 3
PROBE_ENV = "ENGRAM_STARTUP_PROBE"
PROBE_PREFIX = "ENGRAM_PROBE"

# Library (soname stem) -> Debian/Ubuntu package. Qt's xcb plugin needs all of the
# xcb ones; Qt itself needs EGL/GL, fontconfig, xkbcommon, glib and dbus.
_CORE_LIBS: dict[str, str] = {
    "EGL": "libegl1",
    "GL": "libgl1",
    "fontconfig": "libfontconfig1",
    "freetype": "libfreetype6",
    "glib-2.0": "libglib2.0-0",
    "dbus-1": "libdbus-1-3",
    "xkbcommon": "libxkbcommon0",
}
_XCB_LIBS: dict[str, str] = {
    "xcb": "libxcb1",
    "X11-xcb": "libx11-xcb1",
    "xkbcommon-x11": "libxkbcommon-x11-0",
    "xcb-cursor": "libxcb-cursor0",
    "xcb-icccm": "libxcb-icccm4",
    "xcb-image": "libxcb-image0",
    "xcb-keysyms": "libxcb-keysyms1",
    "xcb-randr": "libxcb-randr0",
    "xcb-render-util": "libxcb-render-util0",
    "xcb-shape": "libxcb-shape0",
    "xcb-xfixes": "libxcb-xfixes0",
    "xcb-xkb": "libxcb-xkb1",
}
_WAYLAND_LIBS: dict[str, str] = {"wayland-client": "libwayland-client0", "wayland-cursor": "libwayland-cursor0"}
# Headless platforms draw into memory: no display-server libraries needed.
_HEADLESS_PLATFORMS = frozenset({"offscreen", "minimal", "vnc", "linuxfb"})


# --------------------------------------------------------------------------------------
# Where the frozen app may write: only the user-data folder
# --------------------------------------------------------------------------------------
def data_dir() -> Path:
    """The user-data folder (or $ENGRAM_DATA_DIR), the only place the app writes to."""
    from desktop.settings import default_data_dir

    return default_data_dir()


def bundle_dir() -> Path:
    """The read-only folder of the running app (the onedir folder when frozen)."""
    if getattr(sys, "frozen", False):
        return Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent))
    return Path(__file__).resolve().parent.parent


def write_log(name: str, text: str) -> Path | None:
    """Write `text` into <data dir>/logs/<name>; never raises (it reports failures)."""
    try:
        folder = data_dir() / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        path.write_text(text, encoding="utf-8")
        return path
    except Exception:  # a failing log must never hide the message it carries
        return None


# --------------------------------------------------------------------------------------
# System-library check (Linux)
# --------------------------------------------------------------------------------------
def qt_platform() -> str:
    """The Qt platform plugin that will be used: $QT_QPA_PLATFORM, else what Qt would pick."""
    chosen = os.environ.get("QT_QPA_PLATFORM", "").split(":")[0].split(";")[0].strip().lower()
    if chosen:
        return chosen
    # Qt 6 prefers Wayland in a Wayland session and falls back to xcb otherwise.
    if os.environ.get("WAYLAND_DISPLAY") and os.environ.get("XDG_SESSION_TYPE", "").lower() == "wayland":
        return "wayland"
    return "xcb"


def library_present(stem: str, search: Sequence[Path] = ()) -> bool:
    """True when lib<stem>.so* is bundled in one of `search` or known to the system loader."""
    for folder in search:
        if glob.glob(str(folder / f"lib{stem}.so*")):
            return True
    return ctypes.util.find_library(stem) is not None


def missing_system_libraries(platform: str | None = None) -> dict[str, str]:
    """Libraries Qt needs for `platform` that the system lacks, as {library: apt package}.

    Libraries PyInstaller bundled (next to the executable or in PySide6/Qt/lib) count
    as present. An empty dict means Qt should start; it is not a guarantee (a broken
    GPU driver still fails later), only a check for the common, fixable case.
    """
    if not sys.platform.startswith("linux"):
        return {}
    platform = platform or qt_platform()
    base = bundle_dir()
    search = [base, base / "PySide6" / "Qt" / "lib"]
    wanted = dict(_CORE_LIBS)
    if platform == "xcb":
        wanted |= _XCB_LIBS
    elif platform.startswith("wayland"):
        wanted |= _WAYLAND_LIBS
    elif platform in _HEADLESS_PLATFORMS:
        # The offscreen plugin still links Qt Gui (EGL/GL, fontconfig), nothing else.
        wanted = {k: v for k, v in wanted.items() if k in ("EGL", "GL", "fontconfig", "freetype", "glib-2.0")}
    return {f"lib{stem}": package for stem, package in wanted.items() if not library_present(stem, search)}


def package_for_soname(message: str) -> str | None:
    """The apt package of the library named in a loader error message, if known."""
    for stem, package in {**_CORE_LIBS, **_XCB_LIBS, **_WAYLAND_LIBS}.items():
        if f"lib{stem}.so" in message:
            return package
    return None


def missing_library_message(missing: dict[str, str], detail: str = "") -> str:
    """One clear message: what is missing and the command that fixes it."""
    packages = " ".join(sorted(set(missing.values())))
    libs = ", ".join(sorted(missing))
    lines = [
        "Engram cannot start: this system lacks libraries the Qt user interface needs.",
        f"Missing: {libs}.",
        "On Debian/Ubuntu install them with:",
        f"    sudo apt-get install {packages}",
        "(Other distributions ship the same libraries under similar names.)",
    ]
    if detail:
        lines.append(f"Details: {detail}")
    return "\n".join(lines)


def report_fatal(message: str, log_name: str = "startup-error.log") -> None:
    """Tell the user: stderr (terminal), a log file, and a dialog when launched from a desktop."""
    sys.stderr.write(message + "\n")
    path = write_log(log_name, message + "\n")
    if path is not None:
        sys.stderr.write(f"(also written to {path})\n")
    # Double-clicked apps have no terminal: try the desktop's own dialog tools. Qt
    # itself is what failed, so it cannot show this message.
    if sys.stdin is not None and sys.stdin.isatty():
        return
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return  # no desktop to show a dialog on
    for tool, args in (("zenity", ["--error", "--no-wrap", "--title=Engram", f"--text={message}"]),
                       ("kdialog", ["--title", "Engram", "--error", message]),
                       ("xmessage", ["-center", message])):
        exe = shutil.which(tool)
        if exe:
            try:
                subprocess.run([exe, *args], check=False, timeout=600)
            except (OSError, subprocess.SubprocessError):
                continue
            return


def check_qt_can_start() -> int | None:
    """Exit status when Qt cannot start here (after telling the user), else None."""
    missing = missing_system_libraries()
    if missing:
        report_fatal(missing_library_message(missing, f"Qt platform plugin: {qt_platform()}"))
        return EXIT_MISSING_LIBRARY
    try:
        # Importing QtWidgets loads Qt Gui and its system dependencies (EGL, GL, ...).
        import PySide6.QtWidgets  # noqa: F401
    except (ImportError, OSError) as exc:
        package = package_for_soname(str(exc))
        found = re.search(r"lib[\w.+-]+?\.so[\d.]*", str(exc))
        name = found.group(0) if found else "a system library"
        missing = {name: package or "(the package that provides it)"}
        report_fatal(missing_library_message(missing, str(exc)))
        return EXIT_MISSING_LIBRARY
    return None


# --------------------------------------------------------------------------------------
# Start-up probes (bench/bench_bundle.py)
# --------------------------------------------------------------------------------------
def rss_bytes(field: str = "VmRSS") -> int:
    """Resident memory of this process (`VmHWM` for the peak), from Linux /proc; 0 when unknown."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def emit_probe(**values: Any) -> None:
    """One machine-readable probe line on stdout for the benchmark to parse."""
    sys.stdout.write(f"{PROBE_PREFIX} {json.dumps(values)}\n")
    sys.stdout.flush()


def install_probe(app: Any, spec: str, *, expect_project: bool = False,
                  report: Callable[..., None] = emit_probe) -> None:
    """Watch for the first shown main window and then run the probe `spec` (window | idle:SECONDS).

    With `expect_project` (a folder was given on the command line) the idle probe
    first waits until the window has opened it, so the memory use includes it.
    Each event goes to `report` (by default a probe line on stdout).
    """
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QMainWindow

    idle_seconds = float(spec.split(":", 1)[1]) if spec.startswith("idle:") else None

    class FirstWindow(QObject):
        """Event filter: fires once, on the first Show of a QMainWindow."""

        def __init__(self) -> None:
            super().__init__(app)
            self.done = False

        def eventFilter(self, obj: QObject, event: QEvent) -> bool:
            if not self.done and event.type() == QEvent.Type.Show and isinstance(obj, QMainWindow):
                self.done = True
                # Let the pending paint/expose events run, so the window is drawn.
                QTimer.singleShot(0, lambda: shown(obj))
            return False

    def shown(window: QMainWindow) -> None:
        report(event="first_window", seconds=round(time.perf_counter() - _T0, 4))
        if idle_seconds is None:
            window.close()
            return
        started = time.perf_counter()

        def wait_for_project() -> None:
            opened = getattr(window, "project", None) is not None
            if opened or not expect_project or time.perf_counter() - started > 120:
                report(event="project_open", opened=opened,
                           seconds=round(time.perf_counter() - _T0, 4))
                QTimer.singleShot(int(idle_seconds * 1000), report_idle)
            else:
                QTimer.singleShot(100, wait_for_project)

        def report_idle() -> None:
            report(event="idle", rss_bytes=rss_bytes(), peak_rss_bytes=rss_bytes("VmHWM"),
                       seconds=round(time.perf_counter() - _T0, 4))
            window.close()

        wait_for_project()

    watcher = FirstWindow()
    app.installEventFilter(watcher)
    app._engram_probe = watcher  # keep a reference for the app's lifetime


# --------------------------------------------------------------------------------------
# Smoke test
# --------------------------------------------------------------------------------------
@dataclass
class Check:
    """The result of one smoke-test check."""

    name: str
    ok: bool
    detail: str = ""
    seconds: float = 0.0


@dataclass
class SmokeReport:
    """Every check, in order, plus context a reader of a failed build needs."""

    frozen: bool
    resources: str
    data_dir: str
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every check passed."""
        return bool(self.checks) and all(c.ok for c in self.checks)

    def run(self, name: str, fn: Callable[[], str]) -> bool:
        """Run one check; an exception or AssertionError makes it fail with its message."""
        start = time.perf_counter()
        try:
            detail, ok = fn(), True
        except Exception as exc:
            detail, ok = f"{type(exc).__name__}: {exc}", False
            log.debug("check %s failed\n%s", name, traceback.format_exc())
        self.checks.append(Check(name, ok, detail, round(time.perf_counter() - start, 3)))
        return ok

    def as_json(self) -> str:
        """The report as pretty JSON."""
        data = asdict(self)
        data["ok"] = self.ok
        return json.dumps(data, indent=2)


# One small file per grammar; each defines something extract_file must find.
SAMPLE_SOURCES: dict[str, str] = {
    "app/main.py": "import os\n\nclass Greeter:\n    def hello(self, name):\n        return f'hi {name}'\n",
    "web/util.js": "export function add(a, b) { return a + b; }\nexport class Box { open() { return add(1, 2); } }\n",
    "web/types.ts": "export interface Point { x: number; y: number }\nexport function norm(p: Point): number "
                    "{ return Math.hypot(p.x, p.y); }\n",
    "web/view.tsx": "import { norm } from './types';\n"
                    "export function View() { return <div>{norm({x: 1, y: 2})}</div>; }\n",
    "svc/server.go": "package svc\n\ntype Server struct{}\n\nfunc (s *Server) Start() error { return nil }\n",
    "core/lib.rs": "pub struct Cache { size: usize }\nimpl Cache { pub fn new() -> Self { Cache { size: 0 } } }\n",
    "core/Main.java": "package core;\npublic class Main {\n  public static void main(String[] a) {}\n}\n",
}

# (Qt translation context, English source) pairs from the UI; any one translated
# proves the French catalogue is loaded and used.
KNOWN_STRINGS: tuple[tuple[str, str], ...] = (
    ("MainWindow", "&File"),
    ("MainWindow", "&Quit"),
    ("MainWindow", "Memory"),
    ("MainWindow", "Open a project to begin."),
    ("WelcomePage", "Recent projects"),
)


def bundle_snapshot() -> set[str]:
    """Every file of the app's own folder, to prove the run wrote nothing there."""
    root = bundle_dir()
    if not getattr(sys, "frozen", False):
        # From the source tree only resources/ stands for the bundle (the repo has caches).
        root = root / "resources"
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def smoke_test(argv: Sequence[str]) -> int:
    """Check every bundled part offscreen with a throw-away data folder; print a JSON report."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    own_data = not os.environ.get("ENGRAM_DATA_DIR")
    if own_data:
        os.environ["ENGRAM_DATA_DIR"] = tempfile.mkdtemp(prefix="engram-smoke-data-")
    status = check_qt_can_start()
    if status is not None:
        return status

    from desktop.paths import resources_root

    report = SmokeReport(frozen=bool(getattr(sys, "frozen", False)), resources=str(resources_root()),
                         data_dir=os.environ["ENGRAM_DATA_DIR"])
    before = bundle_snapshot()
    project_dir = Path(tempfile.mkdtemp(prefix="engram-smoke-project-"))
    for rel, text in SAMPLE_SOURCES.items():
        target = project_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    from desktop.ui.app import create_app

    app = create_app([argv[0] if argv else "engram"])
    state: dict[str, Any] = {}
    try:
        _core_checks(report, project_dir, state)
        _gui_checks(report, app, project_dir, state)
    finally:
        project = state.get("project")
        if project is not None:
            project.close()
        shutil.rmtree(project_dir, ignore_errors=True)
    after = bundle_snapshot()
    report.run("no_writes_in_bundle", lambda: _no_new_files(before, after))
    sys.stdout.write(report.as_json() + "\n")
    sys.stdout.flush()
    if own_data:
        shutil.rmtree(os.environ["ENGRAM_DATA_DIR"], ignore_errors=True)
    return 0 if report.ok else 1


def _no_new_files(before: set[str], after: set[str]) -> str:
    new = sorted(after - before)
    assert not new, f"the app wrote into its own folder: {new[:5]}"
    return f"no new files among the app's {len(after)} ({'bundle' if getattr(sys, 'frozen', False) else 'resources'})"


def headless_doors(project_dir: Path) -> str:
    """The commands agents run, by the entry point Engram writes into their settings (in the built app:
    this executable with --cli): a hook answers without a window, and the MCP server answers initialize."""
    from desktop.agents.launch import engram_argv, spawn_environment

    argv = engram_argv()
    env = {**spawn_environment(), "ENGRAM_HOOK_NO_SERVICE": "1"}
    payload = json.dumps({"session_id": "smoke", "cwd": str(project_dir), "hook_event_name": "SessionStart",
                          "source": "startup"})
    hook = subprocess.run([*argv, "hook", "session-start", "--agent", "claude-code"], input=payload,
                          capture_output=True, text=True, timeout=60, env=env, cwd=project_dir)
    assert hook.returncode == 0 and hook.stderr == "", f"hook: exit {hook.returncode}, {hook.stderr[-300:]}"
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "smoke", "version": "1"}}})
    started = time.perf_counter()
    mcp = subprocess.run([*argv, "mcp"], input=init + "\n", capture_output=True, text=True, timeout=60, env=env,
                         cwd=project_dir)
    reply = json.loads(mcp.stdout.splitlines()[0]) if mcp.stdout.strip() else {}
    assert reply.get("result", {}).get("serverInfo", {}).get("name") == "engram", f"mcp: {mcp.stdout[:200]!r}"
    return (f"{' '.join(argv)}: hook answered headless ({len(hook.stdout)} chars), MCP initialize answered "
            f"({time.perf_counter() - started:.2f} s with its exit)")


def _core_checks(report: SmokeReport, project_dir: Path, state: dict[str, Any]) -> None:
    """Store, vectors, model and grammars: the plain-Python core inside the bundle."""
    from desktop.composition import Engram
    from desktop.settings import Settings

    def open_project() -> str:
        engram = Engram(Settings.load())
        state["engram"] = engram
        project = engram.open_project(project_dir, remember=False)
        state["project"] = project
        db_path = Path(project.info.db_path).resolve()
        data = Path(os.environ["ENGRAM_DATA_DIR"]).resolve()
        assert data in db_path.parents, f"database {db_path} is outside the data folder {data}"
        return f"{project.info.name}: {db_path}"

    if not report.run("open_project", open_project):
        return

    def vec0() -> str:
        from desktop.memory.store.connection import vec0_path

        conn = state["project"].db.reads.conn()
        version = conn.execute("select vec_version()").fetchall()[0][0]
        return f"vec0 {version} from {vec0_path()}"

    report.run("vec0_loaded", vec0)

    def embed() -> str:
        import numpy as np

        from desktop.memory.embedding.local import LocalMiniLMProvider

        provider = LocalMiniLMProvider()
        vectors = provider.embed(["Run migrations with make migrate, never alembic directly."])
        assert vectors.shape == (1, 384), f"shape {vectors.shape}, expected (1, 384)"
        norm = float(np.linalg.norm(vectors[0]))
        assert abs(norm - 1.0) < 1e-3, f"norm {norm}, expected 1"
        return f"384 dims, norm {norm:.4f}"

    report.run("embed_bundled_model", embed)

    from desktop.memory.graph import extract_file

    for rel in SAMPLE_SOURCES:
        def parse(rel: str = rel) -> str:
            result = extract_file(rel, (project_dir / rel).read_bytes())
            symbols = [n for n in result.nodes if n.type != "file"]
            assert result.language, f"no grammar for {rel}"
            assert symbols, f"{result.language}: no symbols found in {rel}"
            return f"{result.language}: {len(symbols)} symbol(s), e.g. {symbols[0].label}"

        report.run(f"grammar{Path(rel).suffix}", parse)

    def memory_round_trip() -> str:
        service = state["project"].memories
        text = "Smoke test: the frozen build stores and reads memories."
        added = service.add(text, type="gotcha").result(timeout=30)
        memory = service.get(added.id)
        assert memory.content == text, f"read back {memory.content!r}"
        return f"memory #{added.id} stored and read back"

    report.run("memory_add_get", memory_round_trip)
    report.run("headless_doors", lambda: headless_doors(project_dir))


def _gui_checks(report: SmokeReport, app: Any, project_dir: Path, state: dict[str, Any]) -> None:
    """French translation, the main window with the project open, a clean quit."""
    from PySide6.QtCore import QCoreApplication, QTranslator

    from desktop.paths import resource_path

    def french() -> str:
        folder = resource_path("i18n")
        translator = QTranslator(app)
        if not translator.load("engram_fr", str(folder)):
            sources = sorted(p.name for p in folder.glob("*")) if folder.exists() else []
            raise AssertionError(
                f"no French translation in the bundle: {folder}/engram_fr.qm is missing (found {sources}); "
                "add i18n/engram_fr.ts and run `python -m desktop.ui.i18n_build` before building")
        app.installTranslator(translator)
        try:
            for context, source in KNOWN_STRINGS:
                text = QCoreApplication.translate(context, source)
                if text and text != source:
                    return f"{context} {source!r} -> {text!r}"
        finally:
            app.removeTranslator(translator)
        raise AssertionError(f"engram_fr.qm loaded but none of {[s for _, s in KNOWN_STRINGS]} is translated")

    report.run("french_translation", french)

    def main_window() -> str:
        from PySide6.QtGui import QIcon

        from desktop.ui.app import main

        if "project" in state:  # hand the database over to the app
            state.pop("project").close()
        icon = QIcon(str(resource_path("icons", "engram.png")))
        assert not icon.isNull(), "icons/engram.png is missing from the bundle"
        app.setWindowIcon(icon)
        # The real start-up path: desktop.ui.app.main() with its qasync event loop,
        # opening the project from the command line; the probe closes the window
        # once the project is open, which quits the app.
        events: dict[str, dict[str, Any]] = {}
        install_probe(app, "idle:0.5", expect_project=True,
                      report=lambda **values: events.__setitem__(str(values["event"]), values))
        state["exit_code"] = main([sys.argv[0], str(project_dir)])
        assert "first_window" in events, "the main window never showed"
        opened = events.get("project_open", {}).get("opened")
        assert opened, f"the window did not open the project ({events.get('project_open')})"
        return (f"shown {events['first_window']['seconds']:.2f} s after start, project opened at "
                f"{events['project_open']['seconds']:.2f} s, window closed")

    report.run("main_window", main_window)

    def clean_quit() -> str:
        code = state.get("exit_code")
        assert code == 0, f"desktop.ui.app.main() returned {code}"
        return "the event loop ended and main() returned 0"

    report.run("clean_quit", clean_quit)


def _new_engram() -> Any:
    from desktop.composition import Engram
    from desktop.settings import Settings

    return Engram(Settings.load())


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------
def enable_fault_dumps() -> None:
    """With ENGRAM_DEBUG set: tracebacks of every thread on a crash, and on SIGUSR1 (a hang).

    A frozen app ignores PYTHONFAULTHANDLER, and a hang in a worker thread shows
    nothing otherwise: ``kill -USR1 <pid>`` prints where each thread is.
    """
    if not os.environ.get("ENGRAM_DEBUG") or sys.stderr is None:
        return
    import faulthandler
    import signal

    faulthandler.enable(all_threads=True)
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, all_threads=True)


def run(argv: Sequence[str] | None = None) -> int:
    """Start the app (or the smoke test) with the checks above."""
    argv = list(sys.argv if argv is None else argv)
    if argv[1:2] == ["--cli"]:
        # Hooks, the warm service and the MCP server run the bundle headless (desktop/agents/launch.py):
        # the command line, never the window.
        from desktop.cli.main import main as cli_main

        return cli_main(argv[2:])
    enable_fault_dumps()
    level = logging.DEBUG if os.environ.get("ENGRAM_DEBUG") else logging.INFO
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if "--smoke-test" in argv[1:]:
        return smoke_test([a for a in argv if a != "--smoke-test"])
    status = check_qt_can_start()
    if status is not None:
        return status

    from PySide6.QtGui import QIcon

    from desktop import APP_ID
    from desktop.paths import resource_path
    from desktop.ui.app import create_app, main

    # Created here (main() reuses it) so the icon and the probe are in place first.
    app = create_app(argv)
    # Wayland matches windows to their desktop entry by this name (engram.desktop).
    app.setDesktopFileName(APP_ID)
    icon = resource_path("icons", "engram.png")
    if icon.exists():
        app.setWindowIcon(QIcon(str(icon)))
    probe = os.environ.get(PROBE_ENV, "")
    if probe:
        install_probe(app, probe, expect_project=any(not a.startswith("-") for a in argv[1:]))
    return main(argv)


if __name__ == "__main__":
    # The code indexer parses in spawned worker processes; in a frozen app each worker
    # re-runs this executable, and freeze_support() turns it into a worker, not a second app.
    import multiprocessing

    multiprocessing.freeze_support()
    sys.exit(run())
