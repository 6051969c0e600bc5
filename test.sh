#!/usr/bin/env bash
# Run the whole test suite: ./test.sh [pytest arguments]
set -euo pipefail
source "$(dirname "$0")/scripts/bootstrap.sh"
cd "$ROOT"
MISSING=""
[ -x /usr/bin/chromium ] || MISSING="$MISSING chromium"          # the browser tests
[ -x /usr/sbin/nginx ] || MISSING="$MISSING nginx"               # the replicas-behind-a-proxy tests
[ -d /usr/share/fonts/opentype/noto ] || MISSING="$MISSING fonts-noto-cjk"  # Chinese type in the screenshots
if [ -n "$MISSING" ]; then
  echo "Installing Debian's$MISSING for the tests ..."
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $MISSING >/dev/null
fi
exec "$VENV/bin/python" -m pytest "$@"
