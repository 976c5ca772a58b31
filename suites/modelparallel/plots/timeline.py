#!/usr/bin/python3
"""Pipeline timeline chart, drawn like the schedule figures of GPipe and
Megatron-LM (Narayanan et al. SC'21, Fig. 3-4): one row per rank, time to
the right, a box per forward (blue) or backward (green) operation labelled
with its micro-batch; chunks of an interleaved schedule in darker shades.
Gaps are the bubble. Input: the JSON `scaleproof pipeline` writes.
Usage: timeline.py TIMELINE.json OUT.png"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

FWD = ["#9ecae1", "#4292c6", "#08519c", "#08306b"]
BWD = ["#a1d99b", "#41ab5d", "#006d2c", "#00441b"]


def main(src, dst):
    with open(src) as f:
        j = json.load(f)
    p, v = j["p"], j["v"]
    fig, ax = plt.subplots(figsize=(max(8, 0.5 * j["m"] * v + 6), 0.7 * p + 1.6))
    end = 0.0
    for r in j["ranks"]:
        y = p - 1 - r["rank"]
        for op in r["ops"]:
            local = op["chunk"] // p  # which of the rank's chunks
            color = (FWD if op["kind"] == "F" else BWD)[min(local, 3)]
            t0, t1 = 1e3 * op["t0"], 1e3 * op["t1"]
            end = max(end, t1)
            ax.barh(y, t1 - t0, left=t0, height=0.8, color=color, edgecolor="black", linewidth=0.4)
            ax.text((t0 + t1) / 2, y, str(op["mb"] + 1), ha="center", va="center", fontsize=7,
                    color="white" if local >= 1 else "black")
    ax.set_yticks(range(p))
    ax.set_yticklabels([f"rank {p - 1 - i}\nbubble {j['ranks'][p - 1 - i]['bubble']:.3f}" for i in range(p)],
                       fontsize=8)
    ax.set_xlim(0, end * 1.01)
    ax.set_xlabel("time since step start (ms); boxes: micro-batch number")
    title = (f"{j['schedule']}  p={p} m={j['m']}" + (f" v={v}" if v > 1 else "") +
             f"  step {1e3 * j['step_s']:.1f} ms; bubble predicted {j['predicted_bubble']:.3f}"
             f", replayed from op durations {j.get('replayed_bubble', float('nan')):.3f}")
    ax.set_title(title, fontsize=10)
    handles = [Patch(color=FWD[0], label="forward"), Patch(color=BWD[0], label="backward")]
    if v > 1:
        handles += [Patch(color=FWD[1], label="forward, 2nd chunk"), Patch(color=BWD[1], label="backward, 2nd chunk")]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.35), ncol=4, fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
