#!/usr/bin/env bash
# Install what the tests need, then run the whole suite offscreen.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/bootstrap.sh"
cd "$ROOT"
export QT_QPA_PLATFORM=offscreen
set +e
.venv/bin/python -m pytest "$@"
rc=$?
set -e
# pytest exits 5 when it collected no test: that is a failure here, not a pass.
if [ "$rc" -eq 5 ]; then echo "engram: no tests were collected" >&2; exit 1; fi
exit "$rc"
