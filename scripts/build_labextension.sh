#!/usr/bin/env bash
# Builds the JupyterLab panel (labextension/ -> mercury_nb/labextension) with jlpm when its
# sources changed since the last build (a content hash kept in .labextension-stamp).
# Needs Node.js >= 18 (Debian: apt-get install nodejs npm) and jupyterlab in .venv (jlpm).
set -euo pipefail
cd "$(dirname "$0")/.."
hash_sources() {
  find labextension/src labextension/style labextension/package.json labextension/tsconfig.json \
    labextension/yarn.lock -type f -print0 2>/dev/null | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
}
want=$(hash_sources)
if [ -f mercury_nb/labextension/static/style.js ] && [ -f .labextension-stamp ] \
    && [ "$(cat .labextension-stamp)" = "$want" ]; then
  echo "labextension: up to date"
  exit 0
fi
command -v node >/dev/null || { echo "labextension: node not found (apt-get install nodejs npm)" >&2; exit 1; }
export PATH="$PWD/.venv/bin:$PATH"
mkdir -p .venv/logs
echo "labextension: building (log: .venv/logs/labextension.log)"
if ! (cd labextension && jlpm install && jlpm build:prod) > .venv/logs/labextension.log 2>&1; then
  tail -n 40 .venv/logs/labextension.log
  echo "labextension build failed" >&2
  exit 1
fi
echo "$want" > .labextension-stamp
# an editable install copies the built files into share/jupyter/labextensions: refresh them
if [ -d .venv/share/jupyter/labextensions ]; then
  rm -rf .venv/share/jupyter/labextensions/mercury-nb
  cp -r mercury_nb/labextension .venv/share/jupyter/labextensions/mercury-nb
  cp install.json .venv/share/jupyter/labextensions/mercury-nb/install.json
fi
