#!/usr/bin/env python3
"""What is alive at the peak of a CUDA caching allocator history: the snapshot pickle that
gpuscope-torch --memory-snapshot and torch.cuda.memory._dump_snapshot write.

usage: memory_peak.py OURS.pickle [REFERENCE.pickle] [--from-us T [T2]] [--top K]

The blocks allocated at the snapshot's end are read from its segments, and the history is
undone backwards from there (an allocation removes its block, a free request puts it back: the
allocator's "allocated bytes" count changes at the request), so blocks allocated before the
recording began are counted too. The peak is searched from the gpuscope-torch timing annotation
(recorded where its peak counters are reset, after the warm-up) or from --from-us (unix
microseconds, as the history's time_us), so it is the same peak as the run's peak_allocated_bytes.
With two files, the blocks alive at each peak are compared by size. Only the standard library is
needed.
"""
import argparse
import collections
import pickle

MB = 1e6
TIMING_ANNOTATION = "gpuscope-torch timing"


def load(path):
    with open(path, "rb") as f:
        snapshot = pickle.load(f)
    traces = [t for t in snapshot.get("device_traces", []) if t]
    if not traces:
        raise SystemExit(f"{path}: no allocator history (was it recorded on a CUDA device?)")
    return snapshot, traces[0]


def allocated_at_end(snapshot, device):
    live = {}
    for segment in snapshot.get("segments", []):
        if segment.get("device", device) != device:
            continue
        address = segment["address"]
        for block in segment.get("blocks", []):
            if block["state"] == "active_allocated":
                live[block.get("address", address)] = block["size"]
            address += block["size"]
    return live


def timing_start_us(snapshot):
    """The time of gpuscope-torch's timing annotation, or None."""
    for annotation in snapshot.get("external_annotations", []) or []:
        if TIMING_ANNOTATION in [str(v) for v in annotation.values()]:
            return annotation.get("time_us")
    return None


def undo(live, event):
    """Steps `live` (address -> size) from after `event` to before it; returns the change in
    allocated bytes."""
    action, addr = event["action"], event.get("addr")
    if action == "alloc":
        return -live.pop(addr, 0)
    if action == "free_requested":
        before = live.get(addr, 0)
        live[addr] = event["size"]
        return event["size"] - before
    return 0


def peak_state(path, from_us=None):
    snapshot, events = load(path)
    device = events[0].get("device", 0) if events else 0
    end = allocated_at_end(snapshot, device)
    start_us = from_us if from_us is not None else timing_start_us(snapshot)
    # Backwards once for the peak (the state after each event; the end state counts too).
    live = dict(end)
    current = sum(live.values())
    peak, peak_after = current, len(events)
    for i in range(len(events) - 1, -1, -1):
        if start_us is not None and events[i].get("time_us", 0) < start_us:
            break
        if current > peak:
            peak, peak_after = current, i + 1
        current += undo(live, events[i])
    # And again up to it for the blocks alive there.
    live = dict(end)
    for i in range(len(events) - 1, peak_after - 1, -1):
        undo(live, events[i])
    recent = [(e["action"], e.get("size", 0)) for e in events[max(0, peak_after - 12):peak_after]]
    return {"peak_bytes": peak, "event": peak_after, "events": len(events),
            "sizes": collections.Counter(live.values()), "blocks": len(live), "recent": recent,
            "window_from_us": start_us, "end_bytes": sum(end.values())}


def describe(label, state, top):
    window = ("from the timing mark" if state["window_from_us"] is not None
              else "over the whole history")
    lines = [f"{label}: peak {state['peak_bytes'] / MB:.1f} MB ({state['peak_bytes']} bytes, "
             f"{window}) in {state['blocks']} blocks, after event {state['event']} of "
             f"{state['events']}; {state['end_bytes'] / MB:.1f} MB allocated at the end"]
    by_bytes = sorted(state["sizes"].items(), key=lambda kv: -kv[0] * kv[1])
    for size, count in by_bytes[:top]:
        lines.append(f"  {count:4d} x {size / MB:10.3f} MB = {size * count / MB:10.1f} MB")
    lines.append("  the events up to the peak: " +
                 ", ".join(f"{a} {s / MB:.1f}" for a, s in state["recent"]))
    return lines


def compare(ours_path, ref_path=None, top=12, labels=("ours", "reference"), from_us=(None, None)):
    """Returns the description (and, with two files, the size-by-size difference) as lines."""
    a = peak_state(ours_path, from_us[0])
    lines = describe(labels[0], a, top)
    if ref_path is None:
        return lines
    b = peak_state(ref_path, from_us[1])
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
    parser.add_argument("--from-us", type=int, nargs="+", default=[],
                        help="search the peak from this time (one per file)")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    from_us = (args.from_us + [None, None])[:2]
    print("\n".join(compare(args.ours, args.reference, args.top, from_us=tuple(from_us))))


if __name__ == "__main__":
    main()
