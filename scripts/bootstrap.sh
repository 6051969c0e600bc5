#!/usr/bin/env bash
# Sourced by app.sh and test.sh: make .venv and install requirements.txt when it changed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PYTHON_BIN="${PYTHON:-python3.11}"
command -v "$PYTHON_BIN" >/dev/null 2>&1 || PYTHON_BIN=python3
if [ ! -x "$VENV/bin/python" ]; then
  echo "Creating the virtual environment in $VENV ..."
  "$PYTHON_BIN" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
fi
STAMP="$VENV/.requirements.sha256"
WANT="$(sha256sum "$ROOT/requirements.txt" | cut -d' ' -f1)"
if [ "$(cat "$STAMP" 2>/dev/null || true)" != "$WANT" ]; then
  echo "Installing requirements.txt into $VENV ..."
  "$VENV/bin/python" -m pip install --quiet -r "$ROOT/requirements.txt"
  echo "$WANT" > "$STAMP"
fi
