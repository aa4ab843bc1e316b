#!/bin/sh
# Stage "fetch": produces the data the next stages work on (numbers 1..N, N from the run input's
# "lines", default 1000) as the file data.txt, which kiln stores as an artifact of the stage.
set -eu
lines=$(sed -n 's/.*"lines": *\([0-9][0-9]*\).*/\1/p' "$KILN_INPUT")
lines=${lines:-1000}
seq 1 "$lines" > "$KILN_OUTPUT_DIR/data.txt"
echo "::output lines=$lines"
