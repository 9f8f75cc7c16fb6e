#!/bin/bash
# Install what is missing, build, and start the neurowarp application on the built-in demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build
if [ -x build/ui/neurowarp ]; then
  exec build/ui/neurowarp "$@"
fi
echo "run-demo: the GUI was not built (see the cmake output above); the CLI is build/app/neurowarp-cli" >&2
exit 1
