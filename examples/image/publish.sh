#!/bin/sh
# Stage "publish": copies the thumbnail to out/<name>.png next to this script, via a temp file and
# a rename, so a reader never sees half a file. Idempotent.
set -eu
out=${IMAGE_OUT_DIR:-$(dirname "$0")/out}
mkdir -p "$out"
cp "$1" "$out/.$2.png.tmp"
mv "$out/.$2.png.tmp" "$out/$2.png"
echo "::output path=$out/$2.png"
