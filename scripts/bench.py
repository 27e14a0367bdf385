#!/usr/bin/python3
"""Summarise benchmark boots: baseline vs patched, medians over boots.

usage: bench.py OUTDIR VARIANT:RUN:SERIAL_LOG...
       bench.py --spread RESULTS_DIR...


Reads the "BENCH ..." lines and histograms which scripts/guest/bench.sh
printed, writes OUTDIR/{summary.txt,results.json,*.dat,*.gp,*.png} and prints
the summary table. Exit status 1 when a boot lacks a result.

--spread compares finished runs (e.g. plain TCG and ICOUNT=auto): per
latency row and variant, the relative spread over boots, (max - min) /
median, and how many rows tell baseline and patched apart (disjoint ranges).
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
                    for part in ("full", "dis"):
                        if f"{part}_{k}" in d:
                            m[f"victim{ld}_{part}_{k[:-3]}_us"] = num(d[f"{part}_{k}"]) / 1000
                m[f"victim{ld}_foreign"] = num(d["foreign_in_victim"])
                m[f"victim{ld}_own"] = num(d["own_in_victim"])
                m[f"victim{ld}_samples"] = num(d["samples"])
                if "blocked" in d:
                    m[f"victim{ld}_blocked"] = num(d["blocked"])
                    m[f"victim{ld}_blocked_us"] = num(d["blocked_ns"]) / 1000
                    m[f"victim{ld}_preempted"] = num(d["preempted"])
                    m[f"victim{ld}_boosted"] = num(d["foreign_boosted"])
                    m[f"victim{ld}_own_elsewhere"] = num(d["own_runs"]) - num(d["own_in_victim"])
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


# Victim loads (test_softirq "victim <cpu> <load> <msecs>"), in table order.
LOADS = [(0, "unloaded"), (2, "control (hard irq, no raise)"), (1, "foreign HI, own TASKLET"),
         (3, "foreign and own TASKLET"), (5, "NET_RX control"), (4, "foreign and own NET_RX")]
FOREIGN_LOADS = [(1, "HI/TASKLET"), (3, "same vector TASKLET"), (4, "same vector NET_RX")]

# (key, label, unit, decimals, kind); rows for the table, in order. kind
# "lat" rows get a spread over boots and an overlap verdict.
ROWS = []
for ld, name in FOREIGN_LOADS:
    ROWS += [
        (f"victim{ld}_foreign", f"victim {name}: foreign handlers run by the RT task", "", 0, "cnt"),
        (f"victim{ld}_foreign_all", f"victim {name}: foreign softirq entries in the RT task (trace)", "", 0, "cnt"),
        (f"victim{ld}_boosted", f"victim {name}: foreign handlers run boosted (PI)", "", 0, "cnt"),
        (f"victim{ld}_blocked", f"victim {name}: sections the RT task blocked in", "", 0, "cnt"),
        (f"victim{ld}_blocked_us", f"victim {name}: time the RT task blocked", "us", 0, "cnt"),
        (f"victim{ld}_own_elsewhere", f"victim {name}: own work run by another context", "", 0, "cnt"),
    ]
ROWS += [("victim0_foreign_all", "victim unloaded: foreign softirq entries in the RT task (trace)", "", 0, "cnt")]
for ld, name in LOADS:
    ROWS += [
        (f"victim{ld}_full_p99_us", f"victim {name}: section p99", "us", 1, "lat"),
        (f"victim{ld}_full_p999_us", f"victim {name}: section p99.9", "us", 1, "lat"),
        (f"victim{ld}_full_max_us", f"victim {name}: section max", "us", 1, "lat"),
        (f"victim{ld}_dis_p999_us", f"victim {name}: local_bh_disable() p99.9", "us", 1, "lat"),
        (f"victim{ld}_p999_us", f"victim {name}: local_bh_enable() p99.9", "us", 1, "lat"),
    ]
ROWS += [
    ("net_avg_us", "RT net loop: cycle latency avg, storm", "us", 0, "lat"),
    ("net_p99_us", "RT net loop: cycle latency p99, storm", "us", 0, "lat"),
    ("net_p999_us", "RT net loop: cycle latency p99.9, storm", "us", 0, "lat"),
    ("net_max_us", "RT net loop: cycle latency max, storm", "us", 0, "lat"),
    ("net_wake_max_us", "RT net loop: wake-up latency max, storm", "us", 0, "lat"),
    ("net_send_p99_us", "RT net loop: send() duration p99, storm", "us", 0, "lat"),
    ("net_send_p999_us", "RT net loop: send() duration p99.9, storm", "us", 0, "lat"),
    ("net_send_max_us", "RT net loop: send() duration max, storm", "us", 0, "lat"),
    ("ct_avg_us", "cyclictest: avg (mean of CPUs), storm", "us", 0, "lat"),
    ("ct_p99_us", "cyclictest: p99 (all CPUs), storm", "us", 0, "lat"),
    ("ct_max_us", "cyclictest: max (all CPUs), storm", "us", 0, "lat"),
    ("cycle_ns", "overhead: bh_disable/raise/bh_enable cycle", "ns", 0, "lat"),
    ("udp_pps", "overhead: UDP loopback packets/s sent", "", 0, "lat"),
    ("udp_pps_received", "overhead: UDP loopback packets/s received", "", 0, "lat"),
    ("ksoftirqd_cs_quiet", "overhead: ksoftirqd context switches/s, UDP flood", "", 1, "cnt"),
    ("ksoftirqd_cs_storm", "overhead: ksoftirqd context switches/s, storm", "", 1, "cnt"),
]


def spread(vals):
    vals = [v for v in vals if v is not None]
    return (min(vals), max(vals)) if vals else None


def verdict(sb, sp):
    """Compare two per-boot ranges: only disjoint ranges are a difference."""
    if not sb or not sp:
        return "-"
    if sp[1] < sb[0]:
        return "lower"
    if sp[0] > sb[1]:
        return "higher"
    return "no diff."


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
    spr = {v: {k: spread([b[0].get(k) for b in boots]) for k, *_ in ROWS}
           for v, boots in by_variant.items()}
    runs = {v: len(b) for v, b in by_variant.items()}
    title = os.path.basename(os.path.normpath(out))
    accel = os.environ.get("BENCH_ACCEL", "unknown")
    res = {"runs": runs, "median": med, "spread": spr, "accel": accel,
           "boots": {v: [b[0] for b in boots] for v, boots in by_variant.items()}}

    lines = [f"softirq-rt benchmark {title}: medians over {runs.get('baseline', 0)} baseline "
             f"and {runs.get('patched', 0)} patched boots", f"accelerator: {accel} (every boot)",
             CAVEAT, ""]
    w = max(len(r[1]) for r in ROWS) + 5
    lines.append("latency rows: median [min-max over boots]; patched vs baseline is a")
    lines.append("difference only where the two ranges do not overlap")
    lines.append(f"{'metric':<{w}} {'baseline':>24} {'patched':>24} {'ratio':>7}  spreads")
    b, p = med.get("baseline", {}), med.get("patched", {})
    sb, sp = spr.get("baseline", {}), spr.get("patched", {})
    res["ratio"] = {}
    res["verdict"] = {}

    def cell(v, s_, dec, kind):
        if kind != "lat" or not s_ or v is None:
            return fmt(v, dec)
        return f"{fmt(v, dec)} [{fmt(s_[0], dec)}-{fmt(s_[1], dec)}]"

    for key, label, unit, dec, kind in ROWS:
        r = ratio(p.get(key), b.get(key))
        res["ratio"][key] = r
        vd = verdict(sb.get(key), sp.get(key)) if kind == "lat" else ""
        res["verdict"][key] = vd
        lab = f"{label} ({unit})" if unit else label
        lines.append(f"{lab:<{w}} {cell(b.get(key), sb.get(key), dec, kind):>24} "
                     f"{cell(p.get(key), sp.get(key), dec, kind):>24} {fmt(r, 2):>7}  {vd}")

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
    paid = [p.get(k) for k in ("victim1_foreign", "victim1_boosted", "victim1_blocked")]
    if all(x is not None for x in paid):
        tot = sum(paid)
        lines.append(f"  foreign work paid by the RT task by any route, different vectors "
                     f"(run in it + run boosted + blocked sections): patched {tot:.0f} "
                     f"(target 0) {'met' if tot == 0 else 'MISSED'}")
    for ld, ctl, name in ((1, 2, "HI"), (3, 2, "same vector TASKLET"), (4, 5, "same vector NET_RX")):
        lc = ratio(p.get(f"victim{ld}_full_p999_us"), p.get(f"victim{ctl}_full_p999_us"))
        lines.append(target(f"victim section p99.9 patched {name} / control", lc, "<=", 1.10))
        blc = ratio(b.get(f"victim{ld}_full_p999_us"), b.get(f"victim{ctl}_full_p999_us"))
        lines.append(f"  (baseline {name} / control: {fmt(blc, 2)})")
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


def spread_report(dirs):
    """Relative boot-to-boot spread of every latency row, one column a run."""
    runs = []
    for d in dirs:
        with open(os.path.join(d, "results.json")) as f:
            runs.append((os.path.basename(os.path.normpath(d)), json.load(f)))
    lat_keys = {r[0] for r in ROWS if r[4] == "lat"}
    w = max(len(r[1]) for r in ROWS) + 2
    print("relative spread over boots, (max-min)/median, baseline / patched")
    print(f"{'metric':<{w}}" + "".join(f" {n[-28:]:>28}" for n, _ in runs))
    for key, label, _, _, kind in ROWS:
        if kind != "lat":
            continue
        cells = []
        for _, res in runs:
            c = []
            for v in ("baseline", "patched"):
                s_, m = res["spread"].get(v, {}).get(key), res["median"].get(v, {}).get(key)
                c.append(f"{(s_[1] - s_[0]) / m:.2f}" if s_ and m else "-")
            cells.append(" / ".join(c))
        print(f"{label:<{w}}" + "".join(f" {c:>28}" for c in cells))
    for name, res in runs:
        vds = [v for k, v in res["verdict"].items() if v in ("lower", "higher", "no diff.")]
        told = sum(v != "no diff." for v in vds)
        rel = sorted((s_[1] - s_[0]) / res["median"][v][k]
                     for v in ("baseline", "patched")
                     for k, s_ in res["spread"].get(v, {}).items()
                     if k in lat_keys and s_ and res["median"][v].get(k))
        mid = f"{rel[len(rel) // 2]:.2f}" if rel else "-"
        p90 = f"{rel[int(len(rel) * 0.9)]:.2f}" if rel else "-"
        print(f"{name}: {res['accel']}, {told} of {len(vds)} latency rows tell baseline and "
              f"patched apart; relative spread median {mid}, p90 {p90}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--spread":
        sys.exit(spread_report(sys.argv[2:]))
    sys.exit(main())
