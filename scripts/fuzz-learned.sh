#!/usr/bin/env bash
# The fuzzers' learned corpora are kept in the repository as one archive per target,
# fuzz/learned/<target>.tar.xz (thousands of small inputs, 36 MB as files, 0.5 MB packed), so the
# working tree stays small enough to travel (the GPU machine takes 64 MiB in all).
#   scripts/fuzz-learned.sh unpack TARGET DIR   # DIR/TARGET/ holds the inputs (empty without an archive)
#   scripts/fuzz-learned.sh pack TARGET DIR     # DIR/TARGET/ becomes fuzz/learned/TARGET.tar.xz
# Archives are written reproducibly (sorted names, fixed times and owners): packing the same
# inputs again gives the same bytes, so a merge that learned nothing leaves git with no change.
set -euo pipefail
cd "$(dirname "$0")/.."
action=${1:?usage: fuzz-learned.sh unpack|pack TARGET DIR} target=${2:?target} dir=${3:?dir}
archive=fuzz/learned/$target.tar.xz
case $action in
  unpack)
    rm -rf "${dir:?}/$target" && mkdir -p "$dir/$target"
    [[ -f $archive ]] && tar -xJf "$archive" -C "$dir"
    ;;
  pack)
    tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$dir" -cf - "$target" | xz -6 -T1 >"$archive.tmp"
    mv "$archive.tmp" "$archive"
    ;;
  *) echo "fuzz-learned.sh: unknown action '$action' (unpack or pack)" >&2; exit 2 ;;
esac
