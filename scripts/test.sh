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
export PATH="$PWD/.venv/bin:$PATH"  # jlpm / jupyter for the panel build
# build requirements first, then an editable install without an isolated build env (which
# would download JupyterLab into a throwaway env on every run); the panel is built by
# scripts/build_labextension.sh below, or by hatch-jupyter-builder when it is missing
if ! { .venv/bin/python -m pip install --disable-pip-version-check hatchling editables "hatch-nodejs-version>=0.3.2" \
        "hatch-jupyter-builder>=0.9" "jupyterlab>=4.2,<5" \
     && .venv/bin/python -m pip install --disable-pip-version-check --no-build-isolation \
        -e ".[test,lab]"; } \
    > .venv/logs/pip-install.log 2>&1; then
  tail -n 40 .venv/logs/pip-install.log
  echo "pip install failed (full log: .venv/logs/pip-install.log)" >&2
  exit 1
fi
echo "== labextension (rebuilt when labextension/ changed)"
bash scripts/build_labextension.sh
echo "== .venv-rtc: .venv with jupyter-collaboration, where the live-edit browser tests run again"
# (tests/browser/test_live_collaboration.py): made once by copying .venv, its panel refreshed
if [ ! -x .venv-rtc/bin/python ] || [ ! -f .venv-rtc/.made ]; then
  rm -rf .venv-rtc
  cp -a .venv .venv-rtc
  if ! .venv-rtc/bin/python -m pip install --disable-pip-version-check "jupyter-collaboration>=3" \
      > .venv/logs/pip-install-rtc.log 2>&1; then
    tail -n 40 .venv/logs/pip-install-rtc.log
    echo "pip install jupyter-collaboration failed (log: .venv/logs/pip-install-rtc.log)" >&2
    exit 1
  fi
  touch .venv-rtc/.made
fi
rm -rf .venv-rtc/share/jupyter/labextensions/mercury-nb
cp -r .venv/share/jupyter/labextensions/mercury-nb .venv-rtc/share/jupyter/labextensions/mercury-nb
echo "== ruff"
.venv/bin/ruff check mercury_nb tests bench
echo "== lint-imports (layers, no import cycles, testing independent)"
.venv/bin/lint-imports
echo "== mypy (strict on mercury_nb.contract)"
.venv/bin/mypy
.venv/bin/mypy --strict mercury_nb/contract
echo "== pytest"
export MERCURY_HOME="${MERCURY_HOME:-$(mktemp -d)}"
.venv/bin/python -m pytest --nbval --nbval-sanitize-with notebooks/nbval-sanitize.cfg -p no:cacheprovider "$@"
