#!/usr/bin/env bash
# Fetch a model that is not installed with the app into the cache: ./fetch.sh gemma-3-270m
set -euo pipefail
source "$(dirname "$0")/scripts/bootstrap.sh"
cd "$ROOT"
exec "$VENV/bin/python" -m model.fetch "$@"
