#!/bin/sh
# Stage "ingest": copies the source image (a path relative to the example folder, the stage's cwd)
# into the output dir as "source", so later stages work on an immutable, content-addressed copy.
set -eu
src=$1
[ -f "$src" ] || { echo "ingest: no such file: $src" >&2; exit 66; }
cp "$src" "$KILN_OUTPUT_DIR/source"
echo "::output bytes=$(wc -c < "$src" | tr -d ' ')"
