#!/usr/bin/env bash
# Prepare the benchmark inputs under bench/.cache/ (git-ignored). Idempotent.
#   - Django 5.2.8 sdist from PyPI, unpacked to bench/.cache/django-5.2.8/
#   - aider-chat 0.86.2 in its own venv bench/.cache/aider-venv (python3.11)
#   - ripgrep (apt) if `rg` is missing
# Usage: bash bench/setup.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache="$here/.cache"
log() { echo "[setup] $*" >&2; }

mkdir -p "$cache/dists" "$cache/results"

# --- Django 5.2.8 sources -------------------------------------------------
django_ver=5.2.8
django_dir="$cache/django-$django_ver"
if [ -d "$django_dir/django" ] && [ -d "$django_dir/tests" ]; then
  log "Django $django_ver already unpacked at $django_dir"
else
  archive=$(ls "$cache/dists" 2>/dev/null | grep -i "^django-${django_ver}\.tar\.gz$" || true)
  if [ -z "$archive" ]; then
    log "downloading Django $django_ver sdist into $cache/dists"
    python3 -m pip download -q --no-deps --no-binary :all: "django==$django_ver" -d "$cache/dists" >&2
    archive=$(ls "$cache/dists" | grep -i "^django-${django_ver}\.tar\.gz$")
  else
    log "found $cache/dists/$archive"
  fi
  log "unpacking $archive"
  tmp=$(mktemp -d "$cache/unpack.XXXXXX")
  tar xzf "$cache/dists/$archive" -C "$tmp"
  top=$(ls "$tmp")                    # e.g. django-5.2.8 (lower case since 4.x sdists)
  rm -rf "$django_dir"
  mv "$tmp/$top" "$django_dir"
  rmdir "$tmp"
  log "Django sources ready at $django_dir"
fi

# --- aider venv -----------------------------------------------------------
aider_ver=0.86.2
venv="$cache/aider-venv"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c \
    "import importlib.metadata as m, sys; sys.exit(m.version('aider-chat') != '$aider_ver')" 2>/dev/null; then
  log "aider-chat $aider_ver already installed in $venv"
else
  if [ ! -x "$venv/bin/python" ]; then
    log "creating venv $venv (python3.11)"
    python3.11 -m venv "$venv"
  fi
  log "installing aider-chat==$aider_ver into $venv (takes a few minutes)"
  "$venv/bin/python" -m pip install -q --upgrade pip >&2
  "$venv/bin/python" -m pip install -q "aider-chat==$aider_ver" >&2
  log "aider-chat installed"
fi

# --- ripgrep --------------------------------------------------------------
if command -v rg >/dev/null 2>&1; then
  log "ripgrep present: $(command -v rg)"
else
  log "rg missing: apt-get update && apt-get install -y ripgrep"
  apt-get update >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y ripgrep >&2
fi

log "done"
