#!/usr/bin/env bash
# Installs what Engram needs on a Debian/Ubuntu machine: the system libraries Qt
# loads, Xvfb for headless runs, a virtualenv with Engram and its dependencies.
# Safe to run any number of times: each step is skipped when already done.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

APT_PACKAGES=(libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libglib2.0-0 libdbus-1-3
  xvfb xauth libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
  libxcb-render-util0 libxcb-shape0 libxcb-xfixes0 libxcb-xkb1 libxcb-xinerama0 git fonts-dejavu-core)
# The hook tests drive the real agent CLIs, which install from npm (issue 16).
command -v npm >/dev/null 2>&1 || APT_PACKAGES+=(nodejs npm)

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "engram: installing system packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The team-memory tests start a real PostgreSQL server (initdb + pg_ctl) in a temp folder.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  echo "engram: installing PostgreSQL (for the team-memory tests)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends postgresql >/dev/null
fi

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "engram: creating virtualenv in .venv"
  "$PY" -m venv .venv
fi
# Reinstall only when the dependency list changed.
stamp=".venv/.engram-deps-$(sha256sum pyproject.toml | cut -c1-16)-${ENGRAM_EXTRAS:-dev}"
if [ ! -f "$stamp" ]; then
  echo "engram: installing Python dependencies"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[${ENGRAM_EXTRAS:-dev}]"
  rm -f .venv/.engram-deps-*
  touch "$stamp"
fi
# The int8-MatMul embedding model is a build product too (resources/, gitignored): derived
# from the installed model by packaging/quantize_model.py (needs onnx, from the dev/build
# extras). Optional: when it cannot be built the app uses the original model.
# A model built by an older recipe (packaging/quantize_model.py RECIPE, recorded in the file) is
# rebuilt; a test keeps the words grep looks for inside RECIPE.
int8_model=resources/models/all-minilm-l6-v2/model.int8.onnx
if [ ! -f "$int8_model" ] || ! grep -qF "one key transpose per layer" "$int8_model"; then
  echo "engram: building the int8 embedding model"
  if ! .venv/bin/python packaging/quantize_model.py >/dev/null 2>.venv/quantize_model.log; then
    echo "engram: could not build the int8 embedding model (see .venv/quantize_model.log);" \
      "using the original model, which is slower"
  fi
fi
# Compiled translations are build products; make them from the sources in i18n/.
.venv/bin/python -m desktop.ui.i18n_build >/dev/null 2>&1 || true
# The real agent CLIs the hook tests run (pinned; cached outside the tree so it survives).
CLI_CACHE="${ENGRAM_TEST_CLI_DIR:-$HOME/.cache/engram-test-cli}"
if command -v npm >/dev/null 2>&1 && [ ! -x "$CLI_CACHE/node_modules/.bin/claude" ]; then
  echo "engram: installing the agent CLIs the hook tests use into $CLI_CACHE"
  npm install -s --prefix "$CLI_CACHE" @anthropic-ai/claude-code@2.1 @openai/codex@0.169 @google/gemini-cli@0.61 \
    >/dev/null 2>&1 || echo "engram: could not install the agent CLIs; their hook tests will install or skip"
fi
