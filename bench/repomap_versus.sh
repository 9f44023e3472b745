#!/usr/bin/env bash
# Warm repo map on Django 5.2.8: this checkout against an older commit, alternating, in
# fresh processes; prints each run's JSON line (bench/repomap_once.py) prefixed by its side.
#   bash bench/setup.sh                      # once: Django under bench/.cache/
#   bash bench/repomap_versus.sh COMMIT [RUNS] [old-first|new-first]
# Each side runs from its own checkout: a fork server's `-c` puts the working directory
# first on sys.path, so running the old code from here would parse with the new.
set -euo pipefail
main=$(cd "$(dirname "$0")/.." && pwd)
commit=${1:?usage: repomap_versus.sh COMMIT [RUNS] [old-first|new-first]}
runs=${2:-9}
order=${3:-old-first}
old="$main/bench/.cache/baseline-${commit:0:12}"
[ -d "$old" ] || git -C "$main" worktree add --detach "$old" "$commit" >&2
django="$main/bench/.cache/django-5.2.8"
homes=$(mktemp -d)
trap 'rm -rf "$homes"' EXIT
run() {  # $1 side (old|new), $2 mode
  local src=$main; [ "$1" = old ] && src=$old
  (cd "$src" && PYTHONPATH="$src" "$main/.venv/bin/python" "$main/bench/repomap_once.py" \
      --root "$django" --tokens 2048 --mode "$2" --home "$homes/$1")
}
sides="old new"; [ "$order" = new-first ] && sides="new old"
for side in $sides; do run "$side" cold >/dev/null; done
for _ in $(seq "$runs"); do
  for side in $sides; do echo "$side $(run "$side" warm)"; done
done
