"""scalelens.trace() against Holistic Trace Analysis' TraceAnalysis on the same traces, in the same
Python process: what a notebook user waits for to get the temporal breakdown and the
communication/computation overlap per rank. Medians of --repeats runs, the ratio HTA / scalelens,
and a check that both give the same figures (scalelens' hta_* columns are HTA's definitions).

    PYTHONPATH=build/default/python python3 bench/python_vs_hta.py --hta-src HTA_CHECKOUT [--traces DIR]

HTA_CHECKOUT is a checkout of facebookresearch/HolisticTraceAnalysis (the folder holding `hta/`);
its dependencies (pandas, plotly, networkx, pydot) from Debian. scalelens reads without its cache
here, so both parse every trace every time."""
import argparse
import os
import statistics
import sys
import time


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--hta-src", required=True)
    ap.add_argument("--traces", default=os.path.join(here, "..", "..", "shared", "data", "kineto", "dlrm-8rank-v100"))
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, args.hta_src)
    os.environ["SCALELENS_NO_CACHE"] = "1"
    import scalelens
    from hta.trace_analysis import TraceAnalysis

    def run_hta():
        a = TraceAnalysis(trace_dir=args.traces)
        return a.get_temporal_breakdown(visualize=False), a.get_comm_comp_overlap(visualize=False)

    def run_scalelens():
        return scalelens.trace(args.traces, hta=True, cache=False).ranks()

    times = {"hta": [], "scalelens": []}
    for _ in range(args.repeats):
        for name, fn in (("hta", run_hta), ("scalelens", run_scalelens)):
            t = time.perf_counter()
            result = fn()
            times[name].append(time.perf_counter() - t)
            if name == "hta":
                breakdown, overlap = result
            else:
                ranks = result
    hta_s, sl_s = statistics.median(times["hta"]), statistics.median(times["scalelens"])
    size = sum(os.path.getsize(os.path.join(args.traces, f)) for f in os.listdir(args.traces) if ".json" in f)
    print(f"traces: {args.traces} ({size / 1e6:.1f} MB, {len(ranks)} ranks), {args.repeats} repeats, medians")
    print(f"HTA TraceAnalysis + temporal breakdown + overlap: {hta_s:.3f} s")
    print(f"scalelens.trace(hta=True).ranks():               {sl_s:.3f} s")
    print(f"ratio HTA / scalelens: {hta_s / sl_s:.1f}x")
    # The same figures: HTA's idle time and compute percentage per rank.
    mine = ranks.set_index("rank")
    worst = 0.0
    for _, row in breakdown.iterrows():
        r = int(row["rank"])
        worst = max(worst, abs(row["idle_time(us)"] - mine.loc[r, "hta_idle_us"]), abs(row["compute_time_pctg"] - mine.loc[r, "hta_compute_pct"]))
    print(f"largest difference of idle µs / compute % per rank against HTA: {worst:g}")


if __name__ == "__main__":
    main()
