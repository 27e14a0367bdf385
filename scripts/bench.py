#!/usr/bin/python3
"""Summarise benchmark boots: baseline vs patched, medians over boots.

usage: bench.py OUTDIR VARIANT:RUN:SERIAL_LOG...

Reads the "BENCH ..." lines and histograms which scripts/guest/bench.sh
printed, writes OUTDIR/{summary.txt,results.json,*.dat,*.gp,*.png} and prints
the summary table. Exit status 1 when a boot lacks a result.
"""

import json
import os
import re
import shutil
import statistics
import subprocess
import sys

CAVEAT = ("Latencies are emulated by QEMU TCG: compare baseline with patched "
          "(ratios, counts), do not quote the absolute microseconds.")


def kv(line):
    """key=value pairs of a BENCH line."""
    return dict(m.groups() for m in re.finditer(r'(\w+)=(\S+)', line))


def num(s):
    return float(s)


def hist_percentile(hist, q):
    """q-quantile (0..1) of a {bucket_us: count} histogram, bucket units."""
    total = sum(hist.values())
    if not total:
        return None
    need = q * total
    acc = 0
    for b in sorted(hist):
        acc += hist[b]
        if acc >= need:
            return b
    return max(hist)


def parse_log(path):
    """One boot: a dict of metric name -> value, and its histograms."""
    m = {}
    hists = {"netloop": {}, "netloop_wake": {}, "netloop_send": {}, "cyclictest": {}}
    section = None
    with open(path, errors="replace") as f:
        for raw in f:
            line = raw.strip().replace("\r", "")
            if line.startswith("softirq-rt: hist "):
                name, what = line.split()[2:4]
                section = name if what == "begin" else None
                continue
            if section and re.match(r'^\d+ ', line):
                cols = [int(c) for c in line.split()]
                if section == "netloop":
                    hists["netloop"][cols[0]] = cols[1]
                    hists["netloop_wake"][cols[0]] = cols[2]
                    if len(cols) > 3:
                        hists["netloop_send"][cols[0]] = cols[3]
                else:
                    # one column per CPU
                    hists["cyclictest"][cols[0]] = cols[1:]
                continue
            if not line.startswith("BENCH "):
                continue
            body = line[6:]
            kind = body.split()[0]
            d = kv(body)
            if kind == "victim":
                ld = d["load"]
                for k in ("p50_ns", "p99_ns", "p999_ns", "max_ns"):
                    m[f"victim{ld}_{k[:-3]}_us"] = num(d[k]) / 1000
                m[f"victim{ld}_foreign"] = num(d["foreign_in_victim"])
                m[f"victim{ld}_own"] = num(d["own_in_victim"])
                m[f"victim{ld}_samples"] = num(d["samples"])
            elif kind == "victim_trace":
                m[f"victim{d['load']}_foreign_all"] = num(d["foreign_vectors"])
                m[f"victim{d['load']}_foreign_by_vector"] = d["foreign_by_vector"]
            elif kind == "cycle":
                m["cycle_ns"] = num(d["cycle_ps"]) / 1000
            elif kind == "flood":
                m["udp_pps"] = num(d["pps_sent"])
                m["udp_pps_received"] = num(d["pps_received"])
                m["ksoftirqd_cs_quiet"] = num(d["ksoftirqd_cs_per_s"])
            elif kind == "storm":
                m["ksoftirqd_cs_storm"] = num(d["ksoftirqd_cs_per_s"])
                m["storm_foreign_fired"] = num(d["foreign_fired"])
            elif kind == "rtnetloop":
                m["net_max_us"] = num(d["max_us"])
                m["net_avg_us"] = num(d["avg_us"])
                m["net_wake_max_us"] = num(d["wake_max_us"])
                m["net_send_max_us"] = num(d["send_max_us"])
                m["net_overflows"] = num(d["overflows"])
            elif kind == "cyclictest":
                if "Max" in d:
                    m["ct_max_us"] = max(num(x) for x in d["Max"].split(","))
                if "Avg" in d:
                    m["ct_avg_us"] = statistics.mean(num(x) for x in d["Avg"].split(","))
    if hists["netloop"]:
        m["net_p99_us"] = hist_percentile(hists["netloop"], 0.99)
        m["net_p999_us"] = hist_percentile(hists["netloop"], 0.999)
    if hists["netloop_send"]:
        m["net_send_p99_us"] = hist_percentile(hists["netloop_send"], 0.99)
        m["net_send_p999_us"] = hist_percentile(hists["netloop_send"], 0.999)
    if hists["cyclictest"]:
        flat = {b: sum(c) for b, c in hists["cyclictest"].items()}
        m["ct_p99_us"] = hist_percentile(flat, 0.99)
        m["ct_p999_us"] = hist_percentile(flat, 0.999)
    return m, hists


# (key, label, unit, decimals); rows for the table, in order
ROWS = [
    ("victim0_foreign", "victim: foreign handlers run by the RT task, unloaded (tasklet)", "", 0),
    ("victim1_foreign", "victim: foreign handlers run by the RT task, loaded (tasklet)", "", 0),
    ("victim0_foreign_all", "victim: foreign softirq entries in the RT task, unloaded (trace)", "", 0),
    ("victim1_foreign_all", "victim: foreign softirq entries in the RT task, loaded (trace)", "", 0),
    ("victim1_own", "victim: own handlers run by the RT task, loaded", "", 0),
    ("victim0_p50_us", "victim: local_bh_enable() p50, unloaded", "us", 1),
    ("victim0_p99_us", "victim: local_bh_enable() p99, unloaded", "us", 1),
    ("victim0_p999_us", "victim: local_bh_enable() p99.9, unloaded", "us", 1),
    ("victim0_max_us", "victim: local_bh_enable() max, unloaded", "us", 1),
    ("victim1_p50_us", "victim: local_bh_enable() p50, loaded", "us", 1),
    ("victim1_p99_us", "victim: local_bh_enable() p99, loaded", "us", 1),
    ("victim1_p999_us", "victim: local_bh_enable() p99.9, loaded", "us", 1),
    ("victim1_max_us", "victim: local_bh_enable() max, loaded", "us", 1),
    ("net_avg_us", "RT net loop: cycle latency avg, storm", "us", 0),
    ("net_p99_us", "RT net loop: cycle latency p99, storm", "us", 0),
    ("net_p999_us", "RT net loop: cycle latency p99.9, storm", "us", 0),
    ("net_max_us", "RT net loop: cycle latency max, storm", "us", 0),
    ("net_wake_max_us", "RT net loop: wake-up latency max, storm", "us", 0),
    ("net_send_p99_us", "RT net loop: send() duration p99, storm", "us", 0),
    ("net_send_p999_us", "RT net loop: send() duration p99.9, storm", "us", 0),
    ("net_send_max_us", "RT net loop: send() duration max, storm", "us", 0),
    ("ct_avg_us", "cyclictest: avg (mean of CPUs), storm", "us", 0),
    ("ct_p99_us", "cyclictest: p99 (all CPUs), storm", "us", 0),
    ("ct_max_us", "cyclictest: max (all CPUs), storm", "us", 0),
    ("cycle_ns", "overhead: bh_disable/raise/bh_enable cycle", "ns", 0),
    ("udp_pps", "overhead: UDP loopback packets/s sent", "", 0),
    ("udp_pps_received", "overhead: UDP loopback packets/s received", "", 0),
    ("ksoftirqd_cs_quiet", "overhead: ksoftirqd context switches/s, UDP flood", "", 1),
    ("ksoftirqd_cs_storm", "overhead: ksoftirqd context switches/s, storm", "", 1),
]


def median(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def fmt(v, dec):
    if v is None:
        return "-"
    return f"{v:.{dec}f}"


def ratio(p, b):
    if p is None or b is None:
        return None
    if b == 0:
        return 0.0 if p == 0 else float("inf")
    return p / b


def write_hist(path, boots, key, percpu=False):
    """Sum a histogram over boots; returns the number of columns written."""
    acc = {}
    ncol = 1
    for _, h in boots:
        for b, c in h[key].items():
            cols = c if percpu else [c]
            ncol = max(ncol, len(cols))
            cur = acc.setdefault(b, [0] * len(cols))
            for i, x in enumerate(cols):
                cur[i] += x
    with open(path, "w") as f:
        for b in sorted(acc):
            f.write(f"{b} " + " ".join(str(x) for x in acc[b]) + "\n")
    return ncol


def plots(out, by_variant, title):
    if not shutil.which("gnuplot"):
        print("gnuplot not found: no plots", file=sys.stderr)
        return []
    made = []
    ncols = {}
    for v, boots in by_variant.items():
        write_hist(os.path.join(out, f"netloop-{v}.dat"), boots, "netloop")
        write_hist(os.path.join(out, f"netloop-wake-{v}.dat"), boots, "netloop_wake")
        write_hist(os.path.join(out, f"netloop-send-{v}.dat"), boots, "netloop_send")
        ncols[v] = write_hist(os.path.join(out, f"cyclictest-{v}.dat"), boots,
                              "cyclictest", percpu=True)
    colour = {"baseline": "#d62728", "patched": "#1f77b4"}
    common = f"""set terminal pngcairo size 1000,600 font ',10' noenhanced
set logscale y
set yrange [0.8:]
set xlabel 'Latency (us, QEMU TCG emulated)'
set ylabel 'Number of samples'
set grid
set key top right
"""
    def write_gp(name, plot_title, lines):
        gp = os.path.join(out, f"{name}.gp")
        with open(gp, "w") as f:
            f.write(common)
            f.write(f"set output '{name}.png'\nset title '{plot_title}, {title}'\n")
            f.write("plot " + ", \\\n     ".join(lines) + "\n")
        made.append(gp)

    # RT network loop: cycle, wake-up and send() per variant
    lines = []
    for v in by_variant:
        for dat, dt, what in (("netloop", 1, "cycle (wake + send)"),
                              ("netloop-wake", 2, "wake-up"), ("netloop-send", 3, "send()")):
            lines.append(f"'{dat}-{v}.dat' using 1:2 with steps dt {dt} "
                         f"lw {2 if dt == 1 else 1} lc rgb '{colour[v]}' title '{v}: {what}'")
    write_gp("netloop", "RT network loop under softirq storm", lines)
    # cyclictest, one line per CPU and variant (OSADL style)
    lines = []
    for v in by_variant:
        for c in range(ncols[v]):
            lines.append(f"'cyclictest-{v}.dat' using 1:{c + 2} with steps "
                         f"lc rgb '{colour[v]}' dt {c + 1} title '{v}: CPU{c}'")
    write_gp("cyclictest", "cyclictest -m -p95 under softirq storm", lines)
    pngs = []
    for gp in made:
        r = subprocess.run(["gnuplot", os.path.basename(gp)], cwd=out,
                           capture_output=True, text=True)
        if r.returncode:
            print(f"gnuplot {gp}: {r.stderr.strip()}", file=sys.stderr)
        else:
            pngs.append(gp[:-3] + ".png")
    return pngs


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    by_variant = {}
    missing = []
    for arg in sys.argv[2:]:
        variant, run, path = arg.split(":", 2)
        m, h = parse_log(path)
        need = ("victim1_p999_us", "net_max_us", "ct_max_us", "cycle_ns", "udp_pps")
        lacking = [k for k in need if k not in m]
        if lacking:
            missing.append(f"{variant} #{run}: no {', '.join(lacking)} in {path}")
        by_variant.setdefault(variant, []).append((m, h))

    med = {v: {k: median([b[0].get(k) for b in boots]) for k, *_ in ROWS}
           for v, boots in by_variant.items()}
    runs = {v: len(b) for v, b in by_variant.items()}
    title = os.path.basename(os.path.normpath(out))
    accel = os.environ.get("BENCH_ACCEL", "unknown")
    res = {"runs": runs, "median": med, "accel": accel,
           "boots": {v: [b[0] for b in boots] for v, boots in by_variant.items()}}

    lines = [f"softirq-rt benchmark {title}: medians over {runs.get('baseline', 0)} baseline "
             f"and {runs.get('patched', 0)} patched boots", f"accelerator: {accel} (every boot)",
             CAVEAT, ""]
    w = max(len(r[1]) for r in ROWS) + 5
    lines.append(f"{'metric':<{w}} {'baseline':>10} {'patched':>10} {'ratio':>7}")
    b, p = med.get("baseline", {}), med.get("patched", {})
    res["ratio"] = {}
    for key, label, unit, dec in ROWS:
        r = ratio(p.get(key), b.get(key))
        res["ratio"][key] = r
        lab = f"{label} ({unit})" if unit else label
        lines.append(f"{lab:<{w}} {fmt(b.get(key), dec):>10} {fmt(p.get(key), dec):>10} "
                     f"{fmt(r, 2):>7}")

    # acceptance targets of the benchmark, stated whatever the outcome
    def target(name, val, op, limit):
        if val is None:
            return f"  {name}: no figure"
        ok = val <= limit if op == "<=" else val >= limit if op == ">=" else val == limit
        return f"  {name}: {val:.2f} (target {op} {limit}) {'met' if ok else 'MISSED'}"

    lines += ["", "targets:"]
    pf = p.get("victim1_foreign")
    bf = b.get("victim1_foreign")
    lines.append(f"  foreign handlers run by the RT task, loaded: patched {fmt(pf, 0)} "
                 f"(target 0) {'met' if pf == 0 else 'MISSED'}, baseline {fmt(bf, 0)} "
                 f"(target > 0) {'met' if bf and bf > 0 else 'MISSED'}")
    lines.append(f"  victim p99.9 patched/baseline, loaded: {fmt(res['ratio']['victim1_p999_us'], 2)} "
                 "(reported, no target)")
    lu = ratio(p.get("victim1_p999_us"), p.get("victim0_p999_us"))
    lines.append(target("victim p99.9 patched loaded/unloaded", lu, "<=", 1.5))
    blu = ratio(b.get("victim1_p999_us"), b.get("victim0_p999_us"))
    lines.append(f"  (baseline loaded/unloaded p99.9 for comparison: {fmt(blu, 2)})")
    lines.append(target("RT net loop max latency patched/baseline", res["ratio"]["net_max_us"],
                        "<=", 0.5))
    lines.append(f"  (RT net loop send() max patched/baseline: {fmt(res['ratio']['net_send_max_us'], 2)}, "
                 f"p99.9: {fmt(res['ratio']['net_send_p999_us'], 2)})")
    lines.append(target("cycle cost patched/baseline", res["ratio"]["cycle_ns"], "<=", 1.05))
    lines.append(target("UDP pps patched/baseline", res["ratio"]["udp_pps"], ">=", 0.97))
    res["loaded_unloaded"] = {"patched": lu, "baseline": blu}

    pngs = plots(out, by_variant, title)
    lines += ["", "files: " + out] + [f"  {os.path.basename(x)}" for x in pngs]
    if missing:
        lines += ["", "incomplete boots:"] + [f"  {x}" for x in missing]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1, default=str)
    sys.stdout.write(text)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
