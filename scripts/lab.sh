#!/usr/bin/env bash
# Installs mercury-nb and JupyterLab into .venv (only when pyproject.toml or the install
# changed: a content hash kept in .venv/.lab-install-stamp) and opens the quickstart.
# Offline by default: the panel offers the shipped demo models, the quickstart uses one.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
mkdir -p .venv/logs
export PATH="$PWD/.venv/bin:$PATH"  # jlpm / jupyter for the panel build
stamp=.venv/.lab-install-stamp
want=$({ cat pyproject.toml install.json; .venv/bin/python -V; } | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
    && .venv/bin/python -c "import mercury_nb, jupyterlab" 2>/dev/null; then
  echo "install: up to date"
else
  echo "install: installing into .venv (log: .venv/logs/pip-install-lab.log)"
  # build requirements first, then an editable install without an isolated build env (which
  # would download JupyterLab into a throwaway env on every run); the panel is built by
  # scripts/build_labextension.sh below, or by hatch-jupyter-builder when it is missing
  if ! { .venv/bin/python -m pip install --disable-pip-version-check hatchling editables \
          "hatch-nodejs-version>=0.3.2" "hatch-jupyter-builder>=0.9" "jupyterlab>=4.2,<5" \
       && .venv/bin/python -m pip install --disable-pip-version-check --no-build-isolation \
          -e ".[lab,test]"; } \
      > .venv/logs/pip-install-lab.log 2>&1; then
    tail -n 40 .venv/logs/pip-install-lab.log
    echo "pip install failed (full log: .venv/logs/pip-install-lab.log)" >&2
    exit 1
  fi
  echo "$want" > "$stamp"
fi
bash scripts/build_labextension.sh
extra=()
[ "$(id -u)" = "0" ] && extra+=(--allow-root)
# the root is this checkout; the printed URL opens the quickstart
exec .venv/bin/jupyter lab "${extra[@]}" --ServerApp.root_dir="$PWD" \
  --LabApp.default_url=/lab/tree/notebooks/01-quickstart.ipynb "$@"
