#!/usr/bin/env python3
"""What is alive at the peak of a CUDA caching allocator history: the snapshot pickle that
gpuscope-torch --memory-snapshot and torch.cuda.memory._dump_snapshot write.

usage: memory_peak.py OURS.pickle [REFERENCE.pickle] [--top K]

The history is replayed from its first event: an allocation adds its block, a free request
removes it (the allocator's "allocated bytes" count drops there too). Blocks allocated before
the recording began are not seen. With two files, the blocks alive at each peak are compared by
size. Only the standard library is needed.
"""
import argparse
import collections
import pickle

MB = 1e6


def history(path):
    with open(path, "rb") as f:
        snapshot = pickle.load(f)
    traces = [t for t in snapshot.get("device_traces", []) if t]
    if not traces:
        raise SystemExit(f"{path}: no allocator history (was it recorded on a CUDA device?)")
    return traces[0]


def replay(events, until=None):
    """Live blocks (address -> size) after events[:until]; with until=None, also the peak."""
    live, current, peak, peak_at = {}, 0, 0, 0
    for i, e in enumerate(events if until is None else events[:until]):
        action = e["action"]
        if action == "alloc":
            live[e["addr"]] = e["size"]
            current += e["size"]
            if current > peak:
                peak, peak_at = current, i + 1
        elif action in ("free_requested", "free_completed") and e["addr"] in live:
            current -= live.pop(e["addr"])
    return live, peak, peak_at


def peak_state(path):
    events = history(path)
    _, peak, peak_at = replay(events)
    live, _, _ = replay(events, until=peak_at)
    sizes = collections.Counter(live.values())
    recent = [(e["action"], e["size"]) for e in events[max(0, peak_at - 12):peak_at]]
    return {"peak_bytes": peak, "event": peak_at, "events": len(events), "sizes": sizes,
            "blocks": len(live), "recent": recent}


def describe(label, state, top):
    lines = [f"{label}: peak {state['peak_bytes'] / MB:.1f} MB in {state['blocks']} blocks, "
             f"at event {state['event']} of {state['events']}"]
    by_bytes = sorted(state["sizes"].items(), key=lambda kv: -kv[0] * kv[1])
    for size, count in by_bytes[:top]:
        lines.append(f"  {count:4d} x {size / MB:10.3f} MB = {size * count / MB:10.1f} MB")
    lines.append("  the events up to the peak: " +
                 ", ".join(f"{a} {s / MB:.1f}" for a, s in state["recent"]))
    return lines


def compare(ours_path, ref_path=None, top=12, labels=("ours", "reference")):
    """Returns the description (and, with two files, the size-by-size difference) as lines."""
    a = peak_state(ours_path)
    lines = describe(labels[0], a, top)
    if ref_path is None:
        return lines
    b = peak_state(ref_path)
    lines += describe(labels[1], b, top)
    lines.append(f"difference at the peaks ({labels[0]} - {labels[1]}): "
                 f"{(a['peak_bytes'] - b['peak_bytes']) / MB:+.1f} MB")
    diffs = []
    for size in set(a["sizes"]) | set(b["sizes"]):
        n = a["sizes"].get(size, 0) - b["sizes"].get(size, 0)
        if n:
            diffs.append((n * size, size, n))
    diffs.sort(key=lambda d: -abs(d[0]))
    for total, size, n in diffs[:top]:
        lines.append(f"  {n:+4d} x {size / MB:10.3f} MB = {total / MB:+10.1f} MB")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ours")
    parser.add_argument("reference", nargs="?")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    print("\n".join(compare(args.ours, args.reference, args.top)))


if __name__ == "__main__":
    main()
