#!/usr/bin/env bash
# Installs mercury-nb with its test tools into .venv, (re)builds the JupyterLab panel when its
# sources changed, then runs ruff, lint-imports, mypy and the whole test suite (unit, loop,
# HTTP-level, kernel, server extension, browser tests in Debian's chromium, and the tutorial
# notebooks).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
mkdir -p .venv/logs
if ! .venv/bin/python -m pip install --disable-pip-version-check -e ".[test,lab]" \
    > .venv/logs/pip-install.log 2>&1; then
  tail -n 40 .venv/logs/pip-install.log
  echo "pip install failed (full log: .venv/logs/pip-install.log)" >&2
  exit 1
fi
echo "== labextension (rebuilt when labextension/ changed)"
bash scripts/build_labextension.sh
echo "== ruff"
.venv/bin/ruff check mercury_nb tests bench
echo "== lint-imports (layers, no import cycles, testing independent)"
.venv/bin/lint-imports
echo "== mypy (strict on mercury_nb.contract)"
.venv/bin/mypy
.venv/bin/mypy --strict mercury_nb/contract
echo "== pytest"
export MERCURY_HOME="${MERCURY_HOME:-$(mktemp -d)}"
.venv/bin/python -m pytest --nbval -p no:cacheprovider "$@"
