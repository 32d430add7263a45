#!/usr/bin/env bash
# Regenerate the lock files from pyproject.toml (needs the package index):
#   requirements.lock      the runtime dependencies: setup.sh, setup.sh --dev
#   requirements-pi.lock   the same and the Pi pin libraries (the pi extra): setup.sh
#                          on a Raspberry Pi and the appliance install (scripts/appliance/appliance.sh)
# Exact versions with every file's hash, at the versions the tests run with
# (constraints-dev.txt), for every platform (markers keep the Pi libraries to ARM).
# Run: bash scripts/lock.sh   (uv, pinned in the dev extra: bash setup.sh --dev)
set -euo pipefail
cd "$(dirname "$0")/.."
uv=.venv/bin/uv
[ -x "$uv" ] || { echo "lock.sh: $uv missing: bash setup.sh --dev" >&2; exit 1; }
common=(--generate-hashes --universal --python-version 3.11 -c constraints-dev.txt --quiet)
"$uv" pip compile pyproject.toml "${common[@]}" -o requirements.lock
"$uv" pip compile pyproject.toml --extra pi "${common[@]}" -o requirements-pi.lock
