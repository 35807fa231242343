#!/usr/bin/env python3
"""The data-parallel scaling table from bench/multi_device.sh's multi_scaling_*.jsonl files:
per model, gpuscope-torch on 1 GPU (CUDA graphs, and eager) and on N GPUs (with CUDA graphs, the
default, and eager: the eager run gives the communication figures), against torchrun + DDP on 1
and N GPUs. Efficiency = N-GPU samples/s / (N x 1-GPU), like for like: the N-GPU run with graphs
against the 1-GPU run with graphs.
One row per model and gradient-communication dtype ("comm"): fp32, and bf16 where a file has
N-GPU runs with gpuscope-torch --grad-comm bf16 or multi_reference.py --comm-hook bf16. One GPU
communicates nothing: the 1-GPU runs are every row's baseline (DDP's 1-GPU run with the same
hook where the file has one). Several runs of one key (table's MULTI_TABLE_ONE_GPU_RUNS) count
as their median: one 1-GPU run alone varied by +-0.6 % (session 17).
Prints the table and one JSON line per row (a `scaling` record)."""
import json
import sys


def median_run(runs):
    """The runs of one key as one: the run of the median samples/s (the lower of the two middle
    ones for an even count), with "runs" their number."""
    ordered = sorted(runs, key=lambda r: r["samples_per_second"])
    return dict(ordered[(len(ordered) - 1) // 2], runs=len(runs))


def rows(path):
    """ours: (N or "Ne", comm) for N-GPU runs, ("1g" or "1e", None) for 1-GPU ones (graphs or
    eager); ref: (world size, comm)."""
    ours, ref, graphs = {}, {}, None
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("type") == "start":
            graphs = r["options"]["cuda_graphs"]
        elif r.get("type") == "result" and r.get("rank", 0) == 0:
            dp = r.get("data_parallel")
            if dp:
                key = (dp["world_size"] if graphs else f'{dp["world_size"]}e',
                       dp.get("grad_comm", "fp32"))
            else:
                key = ("1g" if graphs else "1e", None)
            ours.setdefault(key, []).append(dict(r, graphs=graphs))
        elif r.get("type") == "reference":
            comm = "bf16" if r.get("comm_hook") == "bf16" else "fp32"
            ref.setdefault((r["world_size"], comm), []).append(r)
    return ({k: median_run(v) for k, v in ours.items()},
            {k: median_run(v) for k, v in ref.items()})


def gib(b):
    return f"{b / 2**30:.1f}" if b else "-"


def main():
    print(f'{"model":9} {"comm":>4} {"ours 1 GPU":>11} {"(graphs)":>9} {"ours N":>9} {"eff.":>6} {"eager N":>8}'
          f' {"eff.":>6} {"comm ms":>8}'
          f' {"exposed":>8} {"overlap":>8} {"GiB/GPU":>8} {"DDP 1":>8} {"DDP N":>8} {"eff.":>6}'
          f' {"ours/DDP":>8}')
    for path in sys.argv[1:]:
        ours, ref = rows(path)
        n = max([k for k, _ in ours if isinstance(k, int)] + [k for k, _ in ref if k > 1],
                default=None)
        if n is None:
            print(path, "no N-GPU row")
            continue
        comms = sorted({c for k, c in ours if c} | {c for k, c in ref if k > 1},
                       key=lambda c: (c != "fp32", c))
        for comm in comms or ["fp32"]:
            row(ours, ref, n, comm, path)


def row(ours, ref, n, comm, path):
    """Prints one model's row for the gradient-communication dtype `comm`, and its record."""
    eager, graphs = ours.get(("1e", None)), ours.get(("1g", None))
    multi = ours.get((n, comm)) or ours.get((f"{n}e", comm))  # with graphs, else eager
    multi_eager = ours.get((f"{n}e", comm))
    like = graphs if multi and multi["graphs"] else eager
    r1, rn = ref.get((1, comm)) or ref.get((1, "fp32")), ref.get((n, comm))
    sps = lambda r: r["samples_per_second"] if r else None
    eff = lambda one, many: many / (n * one) if one and many else None
    dp = (multi_eager or multi or {}).get("data_parallel") or {}
    collective = dp.get("collective_seconds_per_step")
    exposed = dp.get("exposed_seconds_per_step")
    mem = max((x.get("peak_reserved_bytes") or 0) for x in dp.get("ranks") or [{}])
    record = {
        "type": "scaling", "model": multi["model"] if multi else None, "gpus": n,
        "grad_comm": comm, "batch_per_gpu": multi["batch"] if multi else None,
        "ours_1gpu_eager": sps(eager), "ours_1gpu_graphs": sps(graphs), "ours_ngpu": sps(multi),
        "ours_ngpu_graphs": bool(multi and multi["graphs"]), "ours_ngpu_eager": sps(multi_eager),
        "ours_efficiency": eff(sps(like), sps(multi)),
        "ours_efficiency_eager": eff(sps(eager), sps(multi_eager)),
        "collective_seconds_per_step": collective, "exposed_seconds_per_step": exposed,
        "overlap_fraction": dp.get("overlap_fraction"), "peak_reserved_bytes_per_gpu": mem,
        "ddp_1gpu": sps(r1), "ddp_ngpu": sps(rn), "ddp_efficiency": eff(sps(r1), sps(rn)),
        "ours_over_ddp": sps(multi) / sps(rn) if multi and rn else None,
        "ours_1gpu_runs": (like or {}).get("runs"), "ddp_1gpu_runs": (r1 or {}).get("runs"),
    }
    f = lambda v, fmt: format(v, fmt) if v is not None else "-"
    model = record["model"] or (rn or r1 or {}).get("model") or path
    print(f'{model:9} {comm:>4} {f(sps(eager), "11.1f")} {f(sps(graphs), "9.1f")}'
          f' {f(sps(multi), "9.1f")} {f(record["ours_efficiency"] and 100 * record["ours_efficiency"], "5.1f")}%'
          f' {f(sps(multi_eager), "8.1f")}'
          f' {f(record["ours_efficiency_eager"] and 100 * record["ours_efficiency_eager"], "5.1f")}%'
          f' {f(collective and collective * 1e3, "8.2f")} {f(exposed and exposed * 1e3, "8.2f")}'
          f' {f(record["overlap_fraction"] and 100 * record["overlap_fraction"], "7.1f")}%'
          f' {gib(mem):>8} {f(sps(r1), "8.1f")} {f(sps(rn), "8.1f")}'
          f' {f(record["ddp_efficiency"] and 100 * record["ddp_efficiency"], "5.1f")}%'
          f' {f(record["ours_over_ddp"], "8.3f")}')
    if (record["ours_1gpu_runs"] or 1) > 1 or (record["ddp_1gpu_runs"] or 1) > 1:
        print(f'{"":9} 1-GPU baselines: the median of {record["ours_1gpu_runs"] or 0} runs (ours),'
              f' {record["ddp_1gpu_runs"] or 0} (DDP)')
    print(json.dumps(record))


if __name__ == "__main__":
    main()
