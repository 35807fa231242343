#!/usr/bin/env bash
# A stand-in for `gpuscope trace` in a dry run of bench/diagnose_device.sh on a machine without a
# GPU: `fake_gpuscope_trace.sh trace [OPTIONS] -o DIR [OPTIONS] -- CMD ARGS...` runs CMD and
# writes DIR/summary.json with empty step figures. Tests the script's plumbing, nothing else.
set -u
[ "${1:-}" = trace ] || { echo "fake gpuscope: only 'trace'" >&2; exit 2; }
shift
dir=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  [ "$1" = "-o" ] && { dir="$2"; shift; }
  shift
done
shift
[ -n "$dir" ] || { echo "fake gpuscope: -o DIR missing" >&2; exit 2; }
mkdir -p "$dir"
"$@"
rc=$?
echo '{"steps": {"source": "marks", "traced": 0}, "gpu": {}, "notes": ["fake"]}' >"$dir/summary.json"
echo "fake gpuscope trace: command exit $rc" >&2
exit "$rc"
