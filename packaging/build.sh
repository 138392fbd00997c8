#!/usr/bin/env bash
# Build the Engram desktop app (PyInstaller, one folder) and smoke-test the result.
#
#   bash packaging/build.sh            # release build into dist/engram/, then the smoke test
#   ENGRAM_BUILD_DEBUG=1 bash packaging/build.sh   # console, verbose imports, no strip
#   bash packaging/build.sh --skip-pip # do not (re)install the build extra (offline re-runs)
#
# Steps: install the `build` extra -> compile translations -> render icons ->
# PyInstaller -> Linux desktop entry + install helper -> smoke test of the frozen app.
# Exits non-zero as soon as any step fails; the smoke report is kept in
# build/smoke-report.json.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
DIST="$ROOT/dist"
WORK="$ROOT/build/pyinstaller"
APP_DIR="$DIST/engram"
EXE="$APP_DIR/engram-desktop"
SKIP_PIP=0
for arg in "$@"; do
  case "$arg" in
    --skip-pip) SKIP_PIP=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

step() { printf '\n==> %s\n' "$*"; }
fail() { echo "build.sh: FAILED: $*" >&2; exit 1; }
trap 'fail "line $LINENO: $BASH_COMMAND"' ERR

[ -x "$PY" ] || fail "no Python at $PY (run bash scripts/run.sh once, or set PYTHON=...)"
START=$(date +%s)

if [ "$SKIP_PIP" -eq 0 ]; then
  step "installing Engram with the build extra (PyInstaller)"
  "$PY" -m pip install --quiet --disable-pip-version-check -e ".[build]"
fi
"$PY" -c "import PyInstaller, sys; print('PyInstaller', PyInstaller.__version__, 'on Python', sys.version.split()[0])"

step "compiling translations (i18n/*.ts -> resources/i18n/*.qm)"
if compgen -G "i18n/engram_*.ts" >/dev/null; then
  "$PY" -m desktop.ui.i18n_build
  ls resources/i18n/*.qm
else
  # The build still works; the app then runs in English only and the smoke test's
  # French check reports the missing catalogue.
  echo "no i18n/engram_*.ts yet: building without translations (the French smoke check will fail)"
fi

step "rendering app icons (resources/icons/engram.svg -> .png/.ico/.icns)"
QT_QPA_PLATFORM=offscreen "$PY" packaging/make_icons.py

step "running PyInstaller ($([ -n "${ENGRAM_BUILD_DEBUG:-}" ] && echo debug || echo release) build)"
rm -rf "$APP_DIR"
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$DIST" --workpath "$WORK" packaging/engram.spec
[ -x "$EXE" ] || fail "PyInstaller did not produce $EXE"

if [[ "$(uname -s)" == Linux ]]; then
  step "writing the Linux desktop entry and its install helper"
  cp resources/icons/engram.png "$APP_DIR/engram.png"
  VERSION="$("$PY" -c 'from desktop import __version__; print(__version__)')"
  # A desktop entry needs absolute paths: this copy points at the folder as built;
  # install.sh rewrites it for wherever the folder has been moved to.
  cat >"$APP_DIR/engram.desktop" <<EOF
[Desktop Entry]
Type=Application
Version=1.0
Name=Engram
GenericName=Codebase memory for AI agents
Comment=Long-term memory of a codebase for AI coding agents ($VERSION)
Exec="$EXE" %f
Icon=$APP_DIR/engram.png
Terminal=false
Categories=Development;
Keywords=AI;agent;memory;code;
StartupNotify=true
StartupWMClass=Engram
EOF
  chmod +x "$APP_DIR/engram.desktop"
  cat >"$APP_DIR/install.sh" <<'EOF'
#!/usr/bin/env bash
# Add Engram to the desktop's application menu (current user only, no root needed):
# copies the desktop entry to ~/.local/share/applications with the absolute path of
# this folder, and the icon into the user's icon theme. Run again after moving the
# folder; `install.sh --uninstall` removes both.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
APPS="${XDG_DATA_HOME:-$HOME/.local/share}/applications"
ICONS="${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor/512x512/apps"
if [ "${1:-}" = "--uninstall" ]; then
  rm -f "$APPS/engram.desktop" "$ICONS/engram.png"
  echo "Engram removed from the application menu."
  exit 0
fi
mkdir -p "$APPS" "$ICONS"
cp "$HERE/engram.png" "$ICONS/engram.png"
sed -e "s|^Exec=.*|Exec=\"$HERE/engram-desktop\" %f|" -e "s|^Icon=.*|Icon=engram|" \
  "$HERE/engram.desktop" >"$APPS/engram.desktop"
chmod +x "$APPS/engram.desktop"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$APPS" || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "${ICONS%/512x512/apps}" || true
echo "Engram added to the application menu ($APPS/engram.desktop -> $HERE/engram-desktop)."
EOF
  chmod +x "$APP_DIR/install.sh"
  if command -v desktop-file-validate >/dev/null; then desktop-file-validate "$APP_DIR/engram.desktop"; fi
fi

step "smoke test of the frozen app (offscreen, throw-away data folder)"
SMOKE_DATA="$(mktemp -d -t engram-smoke-XXXXXX)"
REPORT="$ROOT/build/smoke-report.json"
mkdir -p "$(dirname "$REPORT")"
set +e
trap - ERR
QT_QPA_PLATFORM=offscreen ENGRAM_DATA_DIR="$SMOKE_DATA" timeout 300 "$EXE" --smoke-test \
  >"$REPORT" 2>"$ROOT/build/smoke-stderr.log"
SMOKE_STATUS=$?
set -e
rm -rf "$SMOKE_DATA"
"$PY" - "$REPORT" <<'EOF' || true
import json, sys
try:
    report = json.load(open(sys.argv[1], encoding="utf-8"))
except (OSError, ValueError) as exc:
    print(f"no readable smoke report: {exc}")
    raise SystemExit(0)
for check in report["checks"]:
    mark = "ok  " if check["ok"] else "FAIL"
    print(f"  {mark} {check['name']:<22} {check['detail']}")
EOF

SIZE="$(du -sh "$APP_DIR" | cut -f1)"
echo
echo "bundle: $APP_DIR ($SIZE), built in $(( $(date +%s) - START )) s"
if [ "$SMOKE_STATUS" -ne 0 ]; then
  echo "smoke report: $REPORT, app log: build/smoke-stderr.log" >&2
  fail "smoke test exited with status $SMOKE_STATUS"
fi
echo "smoke test passed. Run $EXE, or $APP_DIR/install.sh to add Engram to the application menu."
