#!/usr/bin/env bash
# Run the whole test suite: ./test.sh [pytest arguments]
set -euo pipefail
source "$(dirname "$0")/scripts/bootstrap.sh"
cd "$ROOT"
if [ ! -x /usr/bin/chromium ]; then
  echo "Installing Debian's chromium for the browser tests ..."
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
exec "$VENV/bin/python" -m pytest "$@"
