#!/usr/bin/env bash
# Launch Engram (installs what it needs first). Extra arguments go to the app.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/bootstrap.sh"
cd "$ROOT"
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ "${QT_QPA_PLATFORM:-}" = "" ]; then
  echo "engram: no display found; starting on a virtual screen (Xvfb)."
  exec xvfb-run -a -s "-screen 0 1440x900x24" .venv/bin/python main.py "$@"
fi
exec .venv/bin/python main.py "$@"
