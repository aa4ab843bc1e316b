#!/bin/sh
# Stage "process": sums fetch's data.txt (handed over as a file under $KILN_INPUT_DIR/fetch/) and
# reports progress. Its output is cached (cache: local:fast-storage): a run with the same data is
# answered from this worker's memory, or from the store's cache, without running this script.
set -eu
data="$KILN_INPUT_DIR/fetch/data.txt"
echo "::progress 10 summing $(wc -l < "$data") lines"
sum=$(awk '{ s += $1 } END { print s }' "$data")
echo "$sum" > "$KILN_OUTPUT_DIR/sum.txt"
echo "::progress 100 done"
echo "::output sum=$sum"
