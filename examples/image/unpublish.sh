#!/bin/sh
# Rollback of "publish": removes out/<name>.png. Idempotent (also when publish never got that far).
set -eu
out=${IMAGE_OUT_DIR:-$(dirname "$0")/out}
rm -f "$out/$1.png" "$out/.$1.png.tmp"
