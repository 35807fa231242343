#!/usr/bin/env python3
"""gpuscope-torch's JSON lines on stdin -> rank 0's result lines on stdout, each with KEY set to
VALUE first (`... | python3 bench/rank0_results.py run NAME`). Rank 0's result names the other
ranks in its per-rank list, so a grep for "rank" cannot tell them apart; the top-level "rank"
can (absent or 0 on rank 0's lines)."""
import json
import sys

key, value = sys.argv[1], sys.argv[2]
for line in sys.stdin:
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if isinstance(r, dict) and r.get("type") == "result" and r.get("rank", 0) == 0:
        print(json.dumps({key: value, **r}), flush=True)
