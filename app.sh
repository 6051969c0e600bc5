#!/usr/bin/env bash
# Start Transformer Anatomy on the shipped default model: ./app.sh [--server.port 8501]
set -euo pipefail
source "$(dirname "$0")/scripts/bootstrap.sh"
cd "$ROOT"
exec "$VENV/bin/python" -m streamlit run serve.py --server.headless true --browser.gatherUsageStats false "$@"
