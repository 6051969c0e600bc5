#!/usr/bin/env bash
# Serve a room from this machine: N app replicas behind nginx, no containers.
#   ./scripts/serve_room.sh [--replicas 2] [--port 8080] [--threads 1] [--host 0.0.0.0]
set -euo pipefail
source "$(dirname "$0")/bootstrap.sh"
cd "$ROOT"
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  echo "Installing Debian's nginx ..."
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
fi
exec "$VENV/bin/python" -m deploy.room "$@"
