#!/usr/bin/python3
"""Summarise benchmark boots: baseline vs patched, medians over boots.

usage: bench.py OUTDIR GROUP:VARIANT:RUN:SERIAL_LOG...
       bench.py --spread RESULTS_DIR...


Reads the "BENCH ..." lines and histograms which scripts/guest/bench.sh
printed, writes OUTDIR/{summary.txt,results.json,*.dat,*.gp,*.png} and prints
the summary table. Exit status 1 when a boot lacks a result.

GROUP is "tcg" for the plain TCG (or KVM) boots, which run every phase, or
"icount<shift>" for the boots which run the victim alone under -icount: the
victim's latency rows come from those when present, everything else from
the "tcg" boots. Baseline and patched are only ever compared within a group.

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
    rtla_cols = []
    with open(path, errors="replace") as f:
        for raw in f:
            line = raw.strip().replace("\r", "")
            if line.startswith("softirq-rt: rtla auto-analysis "):
                section = "aa" if line.endswith("begin") else None
                continue
            if section == "aa":
                m.setdefault("rtla_aa", []).append(line)
                continue
            if line.startswith("softirq-rt: hist "):
                name, what = line.split()[2:4]
                section = name if what == "begin" else None
                continue
            if section == "rtla":
                # "Index IRQ-001 Thr-001", then "<us> <irq> <thread>" and
                # "min:", "avg:", "max:" rows
                f_ = line.split()
                if f_ and f_[0] == "Index":
                    rtla_cols = [c.split("-")[0].lower() for c in f_[1:]]
                elif f_ and f_[0] in ("min:", "avg:", "max:") and rtla_cols:
                    for c, x in zip(rtla_cols, f_[1:]):
                        if re.match(r'^[\d.]+$', x):
                            m[f"rtla_{c}_{f_[0][:-1]}_us"] = num(x)
                elif f_ and f_[0].isdigit() and rtla_cols:
                    hists.setdefault("rtla", {})[int(f_[0])] = [int(x) for x in f_[1:]]
                continue
            if section and re.match(r'^\d+ ', line):
                cols = [int(c) for c in line.split()]
                if section.startswith("victim"):
                    # <us> <section> <disable> <enable>
                    hists.setdefault("victim", {}).setdefault(section[6:], {})[cols[0]] = cols[1:4]
                elif section == "netloop":
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
                ld = d.get("raiser", d["load"])
                for k in ("p50_ns", "p99_ns", "p999_ns", "max_ns"):
                    m[f"victim{ld}_{k[:-3]}_us"] = num(d[k]) / 1000
                    for part in ("full", "dis"):
                        if f"{part}_{k}" in d:
                            m[f"victim{ld}_{part}_{k[:-3]}_us"] = num(d[f"{part}_{k}"]) / 1000
                m[f"victim{ld}_foreign"] = num(d["foreign_in_victim"])
                if num(d.get("resp_n", "0")):
                    # from the earliest end of each sleep to the end of the
                    # next section: every route at once, the wait for the
                    # CPU included (modules before 2026-12-07 lack it)
                    m[f"victim{ld}_resp_mean_us"] = num(d["resp_ns"]) / num(d["resp_n"]) / 1000
                    for k in ("p99", "p999"):
                        m[f"victim{ld}_resp_{k}_us"] = num(d[f"resp_{k}_ns"]) / 1000
                if "rest_p99_ns" in d:
                    # what made a section longer (modules before
                    # 2026-12-07, night, lack it): the foreign handlers run
                    # in one, and the section less its delay, the handlers
                    # run in it and the time blocked
                    m[f"victim{ld}_foreign_section_max"] = num(d["foreign_section_max"])
                    m[f"victim{ld}_foreign_sections_over1"] = num(d["foreign_sections_over1"])
                    for k in ("p99", "p999", "max"):
                        m[f"victim{ld}_rest_{k}_us"] = num(d[f"rest_{k}_ns"]) / 1000
                if "quiet_n" in d:
                    # of the sections which did not block, those during
                    # which ksoftirqd was woken and the others: what is
                    # left of them as above and their local_bh_enable()
                    # (fewer than WOKE_MIN such sections in a boot: no
                    # value, no verdict from one or two sections)
                    m[f"victim{ld}_ksd_woken"] = num(d["ksoftirqd_woken"])
                    m[f"victim{ld}_ksd_woken_enable"] = num(d["ksoftirqd_woken_enable"])
                    m[f"victim{ld}_woke_pending"] = d["woke_pending"]
                    for part, n in (("woke", d["ksoftirqd_woken"]), ("quiet", d["quiet_n"])):
                        if num(n) < WOKE_MIN:
                            continue
                        for k in ("p50", "p99", "max"):
                            m[f"victim{ld}_rest_{part}_{k}_us"] = num(d[f"rest_{part}_{k}_ns"]) / 1000
                            m[f"victim{ld}_en_{part}_{k}_us"] = num(d[f"en_{part}_{k}_ns"]) / 1000
                m[f"victim{ld}_own"] = num(d["own_in_victim"])
                m[f"victim{ld}_samples"] = num(d["samples"])
                if ld == "0":
                    # the tick alone: the raisers' reference, from the same boots
                    for k in ("full_p999_ns", "full_max_ns", "p999_ns"):
                        m[f"victimtick_{k[:-3]}_us"] = num(d[k]) / 1000
                    for k in ("resp_mean", "resp_p99", "resp_p999"):
                        if f"victim0_{k}_us" in m:
                            m[f"victimtick_{k}_us"] = m[f"victim0_{k}_us"]
                if "blocked" in d:
                    # sections, not blocking events: a section which blocks
                    # in local_bh_disable() and again in local_bh_enable()
                    # is one (logs before the module counted sections have
                    # only the events)
                    m[f"victim{ld}_blocked"] = num(d.get("blocked_sections", d["blocked"]))
                    m[f"victim{ld}_blocked_us"] = num(d["blocked_ns"]) / 1000
                    if num(d.get("blocked_sections", "0")):
                        # per section which blocked: what one wait cost (a
                        # boot without one has no value, not 0)
                        m[f"victim{ld}_blocked_p99_us"] = num(d["blocked_p99_ns"]) / 1000
                        m[f"victim{ld}_blocked_max_us"] = num(d["blocked_max_ns"]) / 1000
                        if "blocked_boosted_max" in d:
                            m[f"victim{ld}_blocked_boosted_max"] = num(d["blocked_boosted_max"])
                            m[f"victim{ld}_blocked_boosted_over1"] = num(d["blocked_boosted_over1"])
                    m[f"victim{ld}_preempted"] = num(d["preempted"])
                    m[f"victim{ld}_boosted"] = num(d["foreign_boosted"])
                    m[f"victim{ld}_own_elsewhere"] = num(d["own_runs"]) - num(d["own_in_victim"])
                    # The share of the foreign work the RT task paid for, by
                    # any route: the foreign handlers it ran itself and the
                    # time it blocked (a boosted foreign handler runs then),
                    # against all the foreign work the timer queued, which
                    # varies from boot to boot under TCG. The module's blocked
                    # time leaves out the handlers it ran itself meanwhile.
                    w = num(d.get("foreign_work_us", "50"))
                    m[f"victim{ld}_work_us"] = w
                    fired = num(d.get("foreign_fired", "0"))
                    if fired:
                        m[f"victim{ld}_paid_pct"] = 100 * (
                            m[f"victim{ld}_foreign"] * w + m[f"victim{ld}_blocked_us"]) / (fired * w)
            elif kind == "raiser_softirqs":
                m[f"victim{d['raiser']}_raised_on_cpu"] = d["raised_on_cpu"]
            elif kind == "victim_trace":
                ld = d.get("raiser", d["load"])
                m[f"victim{ld}_foreign_all"] = num(d["foreign_vectors"])
                m[f"victim{ld}_foreign_by_vector"] = d["foreign_by_vector"]
                if "foreign_us" in d:
                    m[f"victim{ld}_foreign_us"] = num(d["foreign_us"])
                if ld == "0":
                    m["victimtick_foreign_all"] = num(d["foreign_vectors"])
                    m["victimtick_foreign_by_vector"] = d["foreign_by_vector"]
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
    # every duration of a victim run must be in its histogram exactly once
    for name, h in hists.get("victim", {}).items():
        got = sum(c[0] for c in h.values())
        if got != m.get(f"victim{name}_samples"):
            m.setdefault("hist_mismatch", []).append(f"victim{name}: {got} in the histogram")
    # What the RT task paid for foreign work by any route, in time: the
    # foreign handlers it ran (trace; the module's blocked time leaves them
    # out) and the time it blocked (a boosted foreign handler runs then).
    # On a shared vector the module's foreign callbacks run inside the RT
    # task's own vector, which the trace counts as own: add them at the
    # module's work per callback.
    for k in [k for k in m if k.endswith("_foreign_us")]:
        v = k[:-len("_foreign_us")]
        if f"{v}_blocked_us" in m:
            m[f"{v}_paid_us"] = m[k] + m[f"{v}_blocked_us"]
            if v in [f"victim{x}" for x, _ in SHARED_LOADS] and f"{v}_work_us" in m:
                m[f"{v}_paid_us"] += m[f"{v}_foreign"] * m[f"{v}_work_us"]
    if hists["netloop"]:
        m["net_p99_us"] = hist_percentile(hists["netloop"], 0.99)
        m["net_p999_us"] = hist_percentile(hists["netloop"], 0.999)
    if hists["netloop_send"]:
        m["net_send_p99_us"] = hist_percentile(hists["netloop_send"], 0.99)
        m["net_send_p999_us"] = hist_percentile(hists["netloop_send"], 0.999)
    if hists.get("rtla") and "thr" in rtla_cols:
        i = rtla_cols.index("thr")
        thr = {b: c[i] for b, c in hists["rtla"].items() if len(c) > i}
        m["rtla_thr_p99_us"] = hist_percentile(thr, 0.99)
    if hists["cyclictest"]:
        flat = {b: sum(c) for b, c in hists["cyclictest"].items()}
        m["ct_p99_us"] = hist_percentile(flat, 0.99)
        m["ct_p999_us"] = hist_percentile(flat, 0.999)
    return m, hists


# Victim loads (test_softirq "victim <cpu> <load> <msecs>"), in table order.
LOADS = [(0, "unloaded"), (2, "control (hard irq, no raise)"), (1, "foreign HI, own TASKLET"),
         (3, "foreign and own TASKLET"), (5, "NET_RX control"), (4, "foreign and own NET_RX")]
FOREIGN_LOADS = [(1, "HI/TASKLET"), (3, "same vector TASKLET"), (4, "same vector NET_RX")]
# the loads whose foreign work shares the RT task's own vector
SHARED_LOADS = FOREIGN_LOADS[1:]

# (key, label, unit, decimals, kind); rows for the table, in order. kind
# "lat" rows get a spread over boots and an overlap verdict, and the
# victim's come from the -icount boots when there are any; "spr" rows get
# the spread and the verdict too, from plain TCG as the "cnt" rows. The
# victim's "icnt" rows are counts from the boots of its latency rows, with
# spread and verdict, and so are its "part" rows, latencies of a subset of
# its sections, with a verdict only if every boot has a value; neither
# counts among the latency rows of the spread footer.
WOKE_MIN = 20
ROWS = []
for ld, name in FOREIGN_LOADS:
    ROWS += [
        (f"victim{ld}_foreign", f"victim {name}: foreign handlers run by the RT task", "", 0, "cnt"),
        (f"victim{ld}_foreign_all", f"victim {name}: foreign softirq entries in the RT task (trace)", "", 0, "cnt"),
        (f"victim{ld}_boosted", f"victim {name}: foreign handlers run boosted (PI)", "", 0, "cnt"),
        (f"victim{ld}_blocked", f"victim {name}: sections the RT task blocked in", "", 0, "cnt"),
        (f"victim{ld}_blocked_us", f"victim {name}: time the RT task blocked", "us", 0, "cnt"),
        (f"victim{ld}_foreign_us", f"victim {name}: time in foreign handlers in the RT task (trace)", "us", 0, "cnt"),
        (f"victim{ld}_paid_us", f"victim {name}: time paid by any route (foreign handlers + blocked)", "us", 0, "cnt"),
        (f"victim{ld}_blocked_p99_us", f"victim {name}: time blocked per blocked section, p99", "us", 1, "spr"),
        (f"victim{ld}_blocked_max_us", f"victim {name}: time blocked per blocked section, max", "us", 1, "spr"),
        (f"victim{ld}_blocked_boosted_max", f"victim {name}: foreign handlers run boosted in one blocked section, max",
         "", 0, "spr"),
        (f"victim{ld}_blocked_boosted_over1", f"victim {name}: blocked sections with more than one boosted foreign handler",
         "", 0, "cnt"),
        (f"victim{ld}_paid_pct", f"victim {name}: share of the foreign work paid by the RT task, any route",
         "%", 1, "spr"),
        (f"victim{ld}_own_elsewhere", f"victim {name}: own work run by another context", "", 0, "cnt"),
    ]
ROWS += [("victim0_foreign_all", "victim unloaded: foreign softirq entries in the RT task (trace)", "", 0, "cnt")]
# Real kernel paths raising softirqs on the victim's CPU, without the
# module's timer; the tick alone is the unloaded run of the same boots.
RAISERS = [("tick", "tick only (unloaded)"), ("rps", "RPS loopback flood"),
           ("blk", "virtio-blk completions"),
           ("net", "virtio-net receive from the host"),
           ("veth", "veth GRO, sender on the CPU"), ("usb", "usb-storage via xHCI"),
           ("bhwq_task", "BH work queued by a task"), ("bhwq_irq", "BH work queued by an irq thread")]
for r, name in RAISERS:
    if r != "tick":
        ROWS += [
            (f"victim{r}_foreign_all", f"raiser {name}: foreign softirq entries in the RT task", "", 0, "cnt"),
            (f"victim{r}_blocked", f"raiser {name}: sections the RT task blocked in", "", 0, "cnt"),
            (f"victim{r}_blocked_us", f"raiser {name}: time the RT task blocked", "us", 0, "cnt"),
            (f"victim{r}_foreign_us", f"raiser {name}: time in foreign handlers in the RT task (trace)",
             "us", 0, "cnt"),
            (f"victim{r}_paid_us", f"raiser {name}: time paid by any route (foreign handlers + blocked)",
             "us", 0, "cnt"),
            (f"victim{r}_blocked_max_us", f"raiser {name}: time blocked per blocked section, max",
             "us", 1, "spr"),
        ]
    # the tick's from plain TCG like the raisers' (victim0_resp_* are -icount)
    ROWS += [
        (f"victim{r}_resp_mean_us", f"raiser {name}: sleep's end to section end, mean", "us", 1, "lat"),
        (f"victim{r}_resp_p99_us", f"raiser {name}: sleep's end to section end, p99", "us", 1, "lat"),
        (f"victim{r}_resp_p999_us", f"raiser {name}: sleep's end to section end, p99.9", "us", 1, "lat"),
        (f"victim{r}_full_p999_us", f"raiser {name}: section p99.9", "us", 1, "lat"),
        (f"victim{r}_full_max_us", f"raiser {name}: section max", "us", 1, "lat"),
        (f"victim{r}_p999_us", f"raiser {name}: local_bh_enable() p99.9", "us", 1, "lat"),
    ]
for ld, name in LOADS:
    ROWS += [
        (f"victim{ld}_full_p99_us", f"victim {name}: section p99", "us", 1, "lat"),
        (f"victim{ld}_full_p999_us", f"victim {name}: section p99.9", "us", 1, "lat"),
        (f"victim{ld}_full_max_us", f"victim {name}: section max", "us", 1, "lat"),
        (f"victim{ld}_dis_p999_us", f"victim {name}: local_bh_disable() p99.9", "us", 1, "lat"),
        (f"victim{ld}_p999_us", f"victim {name}: local_bh_enable() p99.9", "us", 1, "lat"),
        (f"victim{ld}_resp_mean_us", f"victim {name}: sleep's end to section end, mean", "us", 1, "lat"),
        (f"victim{ld}_resp_p99_us", f"victim {name}: sleep's end to section end, p99", "us", 1, "lat"),
        (f"victim{ld}_resp_p999_us", f"victim {name}: sleep's end to section end, p99.9", "us", 1, "lat"),
        (f"victim{ld}_rest_p99_us", f"victim {name}: section less delay, handlers run and blocked time, p99",
         "us", 1, "lat"),
        (f"victim{ld}_rest_p999_us", f"victim {name}: section less delay, handlers run and blocked time, p99.9",
         "us", 1, "lat"),
        (f"victim{ld}_rest_max_us", f"victim {name}: section less delay, handlers run and blocked time, max",
         "us", 1, "lat"),
        (f"victim{ld}_ksd_woken", f"victim {name}: sections (not blocked) during which ksoftirqd was woken",
         "", 0, "icnt"),
        (f"victim{ld}_ksd_woken_enable", f"victim {name}: sections during whose local_bh_enable() ksoftirqd was woken",
         "", 0, "icnt"),
    ]
    for part, what in (("woke", "which woke ksoftirqd"), ("quiet", "which did not")):
        ROWS += [(f"victim{ld}_rest_{part}_{k}_us",
                  f"victim {name}: section less delay, handlers and blocked time, sections {what}, {k}",
                  "us", 1, "part") for k in ("p50", "p99", "max")]
        ROWS += [(f"victim{ld}_en_{part}_{k}_us", f"victim {name}: local_bh_enable(), sections {what}, {k}",
                  "us", 1, "part") for k in ("p50", "p99", "max")]
    if ld in dict(FOREIGN_LOADS):
        # from the same boots as the section's latency rows
        ROWS += [
            (f"victim{ld}_foreign_section_max", f"victim {name}: foreign handlers run in one section, max",
             "", 0, "icnt"),
            (f"victim{ld}_foreign_sections_over1", f"victim {name}: sections with more than one foreign handler",
             "", 0, "icnt"),
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
    ("rtla_irq_max_us", "rtla timerlat: IRQ latency max, storm", "us", 0, "lat"),
    ("rtla_thr_avg_us", "rtla timerlat: thread latency avg, storm", "us", 0, "lat"),
    ("rtla_thr_p99_us", "rtla timerlat: thread latency p99, storm", "us", 0, "lat"),
    ("rtla_thr_max_us", "rtla timerlat: thread latency max, storm", "us", 0, "lat"),
    ("cycle_ns", "overhead: bh_disable/raise/bh_enable cycle", "ns", 0, "lat"),
    ("udp_pps", "overhead: UDP loopback packets/s sent", "", 0, "lat"),
    ("udp_pps_received", "overhead: UDP loopback packets/s received", "", 0, "lat"),
    ("ksoftirqd_cs_quiet", "overhead: ksoftirqd context switches/s, UDP flood", "", 1, "cnt"),
    ("ksoftirqd_cs_storm", "overhead: ksoftirqd context switches/s, storm", "", 1, "cnt"),
]


def spread(vals):
    vals = [v for v in vals if v is not None]
    return (min(vals), max(vals)) if vals else None


def spread_all(vals):
    """The range only if every boot has a value (a verdict on all of them)."""
    return spread(vals) if vals and None not in vals else None


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


def write_hist(path, boots, get, fill=False):
    """Sum the histogram get(boot's hists) over boots, one column per
    element of a list count; returns the number of columns, 0 if empty.
    fill: every bucket from the first to the last, the empty ones as 0.1,
    below the plots' y range: a step then drops to the axis instead of
    bridging the gap, and a lone bucket shows as a spike (0 itself is
    undefined on the log scale)."""
    acc = {}
    ncol = 0
    for _, h in boots:
        for b, c in get(h).items():
            cols = c if isinstance(c, list) else [c]
            ncol = max(ncol, len(cols))
            cur = acc.setdefault(b, [0] * len(cols))
            for i, x in enumerate(cols):
                cur[i] += x
    if not acc:
        return 0
    buckets = range(min(acc), max(acc) + 1) if fill else sorted(acc)
    with open(path, "w") as f:
        for b in buckets:
            f.write(f"{b} " + " ".join(str(x or 0.1) if fill else str(x)
                                       for x in acc.get(b, [0] * ncol)) + "\n")
    return ncol


COLOUR = {"baseline": "#d62728", "patched": "#1f77b4", "control": "#7f7f7f"}
COMMON_GP = """set terminal pngcairo size 1000,600 font ',10' noenhanced
set logscale y
set yrange [0.8:]
set xlabel 'Latency (us, QEMU TCG emulated)'
set ylabel 'Number of samples'
set grid
set key top right
"""

# The victim's figures: loaded run, its control (patched kernel: the
# physical floor), and the parts of a section.
VICTIM_FIGS = [("1", "2", "foreign HI, own TASKLET"), ("3", "2", "foreign and own TASKLET"),
               ("4", "5", "foreign and own NET_RX"), ("rps", "0", "RPS loopback flood"),
               ("blk", "0", "virtio-blk completions"),
               ("net", "0", "virtio-net receive"), ("veth", "0", "veth GRO, sender on the CPU"),
               ("usb", "0", "usb-storage via xHCI"), ("bhwq_task", "0", "BH work queued by a task"),
               ("bhwq_irq", "0", "BH work queued by an irq thread")]
VICTIM_PARTS = [(1, "section", "local_bh_disable() + section + local_bh_enable()"),
                (2, "disable", "local_bh_disable()"), (3, "enable", "local_bh_enable()")]


def plots(out, tcg, victim, title, victim_src):
    """One PNG per latency figure, baseline and patched overlaid."""
    if not shutil.which("gnuplot"):
        print("gnuplot not found: no plots", file=sys.stderr)
        return []
    made = []

    def write_gp(name, plot_title, lines, logx=False):
        gp = os.path.join(out, f"{name}.gp")
        with open(gp, "w") as f:
            f.write(COMMON_GP)
            if logx:
                # plain TCG tails reach 100 times the body: a log x axis
                # keeps both readable (x = bucket + 1 us, its upper edge)
                f.write("set logscale x\nset xlabel 'Latency (us, upper bucket edge, "
                        "log scale, QEMU TCG emulated)'\n")
            f.write(f"set output '{name}.png'\nset title '{plot_title}, {title}'\n")
            f.write("plot " + ", \\\n     ".join(lines) + "\n")
        made.append(gp)

    for ld, ctl, name in VICTIM_FIGS:
        # the raisers ran in the plain boots, the module's loads in the victim boots
        boots = tcg if not ld.isdigit() else victim
        src = "plain TCG" if not ld.isdigit() else victim_src
        # a raiser's control is the unloaded run of the same boots
        if not ld.isdigit():
            ctl = "0"
        def victim_hist(name):
            return lambda h: h.get("victim", {}).get(name, {})
        have = {v: write_hist(os.path.join(out, f"victim-{ld}-{v}.dat"), b, victim_hist(ld),
                              fill=True) for v, b in boots.items()}
        have_ctl = write_hist(os.path.join(out, f"victim-{ctl}-control.dat"),
                              boots.get("patched", []), victim_hist(ctl), fill=True)
        if not any(have.values()):
            continue
        for col, part, what in VICTIM_PARTS:
            x = "($1 + 1)" if boots is tcg else "1"
            lines = [f"'victim-{ld}-{v}.dat' using {x}:{col + 1} with steps lw 2 "
                     f"lc rgb '{COLOUR[v]}' title '{v}: {name}'"
                     for v in boots if have.get(v)]
            if have_ctl:
                cname = "unloaded (tick only)" if ctl == "0" else "control (hard irq, no raise)"
                lines.append(f"'victim-{ctl}-control.dat' using {x}:{col + 1} with steps lw 1 "
                             f"lc rgb '{COLOUR['control']}' title 'patched: {cname}'")
            write_gp(f"victim-{ld}-{part}", f"RT victim {what}, {name} ({src})", lines,
                     logx=boots is tcg)

    for v, boots in tcg.items():
        for dat, key in (("netloop", "netloop"), ("netloop-wake", "netloop_wake"),
                         ("netloop-send", "netloop_send")):
            write_hist(os.path.join(out, f"{dat}-{v}.dat"), boots, lambda h, k=key: h[k])
    for dat, what in (("netloop", "cycle (wake-up + send)"), ("netloop-wake", "wake-up"),
                      ("netloop-send", "send() duration")):
        lines = [f"'{dat}-{v}.dat' using 1:2 with steps lw 2 lc rgb '{COLOUR[v]}' title '{v}'"
                 for v in tcg]
        write_gp(dat if dat != "netloop" else "netloop-cycle",
                 f"RT network loop under softirq storm: {what}", lines)
    # rtla timerlat thread latency on the victim's CPU
    lines = []
    for v, boots in tcg.items():
        if not write_hist(os.path.join(out, f"rtla-{v}.dat"), boots, lambda h: h.get("rtla", {})):
            continue
        lines.append(f"'rtla-{v}.dat' using 1:3 with steps lw 2 lc rgb '{COLOUR[v]}' "
                     f"title '{v}: thread'")
        lines.append(f"'rtla-{v}.dat' using 1:2 with steps lw 1 dt 2 lc rgb '{COLOUR[v]}' "
                     f"title '{v}: IRQ'")
    if lines:
        write_gp("rtla-timerlat", "rtla timerlat -k -P f:95 under softirq storm", lines)
    # cyclictest, one line per CPU and variant (OSADL style)
    lines = []
    for v, boots in tcg.items():
        ncol = write_hist(os.path.join(out, f"cyclictest-{v}.dat"), boots,
                          lambda h: h["cyclictest"])
        for c in range(ncol):
            lines.append(f"'cyclictest-{v}.dat' using 1:{c + 2} with steps "
                         f"lc rgb '{COLOUR[v]}' dt {c + 1} title '{v}: CPU{c}'")
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


VICTIM_LAT = re.compile(r'^victim\d_')


def told_apart(med, spr, keys):
    """Rows whose baseline and patched ranges are disjoint; relative spreads."""
    told, rel = 0, []
    for k in keys:
        sb, sp = spr.get("baseline", {}).get(k), spr.get("patched", {}).get(k)
        if verdict(sb, sp) in ("lower", "higher"):
            told += 1
        for v, s_ in (("baseline", sb), ("patched", sp)):
            m = med.get(v, {}).get(k)
            if s_ and m:
                rel.append((s_[1] - s_[0]) / m)
    return told, sorted(rel)


def by_vector(boots, key):
    """Foreign softirq entries by vector, summed over boots: 'NET_RX:12,...'."""
    acc = {}
    for m, _ in boots:
        s_ = m.get(key)
        if not s_ or s_ == "-":
            continue
        for item in s_.split(","):
            vec, n = item.split(":")
            acc[vec] = acc.get(vec, 0) + int(n)
    return ",".join(f"{k}:{acc[k]}" for k in sorted(acc)) or "-"


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    groups = {}
    missing = []
    for arg in sys.argv[2:]:
        group, variant, run, path = arg.split(":", 3)
        m, h = parse_log(path)
        need = (("victim1_full_p999_us",) if group != "tcg" else
                ("victim1_p999_us", "net_max_us", "ct_max_us", "cycle_ns", "udp_pps"))
        lacking = [k for k in need if k not in m]
        if lacking:
            missing.append(f"{group} {variant} #{run}: no {', '.join(lacking)} in {path}")
        for x in m.get("hist_mismatch", []):
            missing.append(f"{group} {variant} #{run}: {x} (of its samples=)")
        groups.setdefault(group, {}).setdefault(variant, []).append((m, h))
    tcg = groups.get("tcg", {})
    vgroup = next((g for g in groups if g != "tcg"), "tcg")
    victim = groups.get(vgroup, {})
    victim_src = vgroup.replace("icount", "TCG -icount shift=") if vgroup != "tcg" else "plain TCG"

    def src(key, kind):
        return vgroup if kind in ("lat", "icnt", "part") and VICTIM_LAT.match(key) else "tcg"

    gstat = {g: {"median": {v: {k: median([b[0].get(k) for b in boots]) for k, *_ in ROWS}
                            for v, boots in by_v.items()},
                 "spread": {v: {k: (spread_all if kind == "part" else spread)([b[0].get(k) for b in boots])
                                for k, _, _, _, kind in ROWS}
                            for v, boots in by_v.items()}}
             for g, by_v in groups.items()}
    med = {v: {k: gstat.get(src(k, kind), {}).get("median", {}).get(v, {}).get(k)
               for k, _, _, _, kind in ROWS} for v in ("baseline", "patched")}
    spr = {v: {k: gstat.get(src(k, kind), {}).get("spread", {}).get(v, {}).get(k)
               for k, _, _, _, kind in ROWS} for v in ("baseline", "patched")}
    runs = {v: len(b) for v, b in tcg.items()}
    title = os.path.basename(os.path.normpath(out))
    accel = os.environ.get("BENCH_ACCEL", "unknown")
    res = {"runs": runs, "median": med, "spread": spr, "accel": accel,
           "victim_latency_from": vgroup, "groups": gstat,
           "boots": {g: {v: [b[0] for b in boots] for v, boots in by_v.items()}
                     for g, by_v in groups.items()}}

    lines = [f"softirq-rt benchmark {title}: medians over {runs.get('baseline', 0)} baseline "
             f"and {runs.get('patched', 0)} patched boots per group", f"accelerator: {accel}",
             f"victim latency rows (*) from: {victim_src} boots; all other rows from plain TCG",
             CAVEAT, ""]
    w = max(len(r[1]) for r in ROWS) + 7
    lines.append("latency rows: median [min-max over boots]; patched vs baseline is a")
    lines.append("difference only where the two ranges do not overlap")
    lines.append(f"{'metric':<{w}} {'baseline':>24} {'patched':>24} {'ratio':>7}  spreads")
    b, p = med["baseline"], med["patched"]
    sb, sp = spr["baseline"], spr["patched"]
    res["ratio"] = {}
    res["verdict"] = {}

    def cell(v, s_, dec, kind):
        if kind not in ("lat", "spr") or not s_ or v is None:
            return fmt(v, dec)
        return f"{fmt(v, dec)} [{fmt(s_[0], dec)}-{fmt(s_[1], dec)}]"

    for key, label, unit, dec, kind in ROWS:
        r = ratio(p.get(key), b.get(key))
        res["ratio"][key] = r
        vd = verdict(sb.get(key), sp.get(key)) if kind in ("lat", "spr", "icnt", "part") else ""
        res["verdict"][key] = vd
        lab = f"{label} ({unit})" if unit else label
        if src(key, kind) != "tcg":
            lab += " *"
        lines.append(f"{lab:<{w}} {cell(b.get(key), sb.get(key), dec, kind):>24} "
                     f"{cell(p.get(key), sp.get(key), dec, kind):>24} {fmt(r, 2):>7}  {vd}")

    lines += ["", "foreign softirq entries in the RT task by vector, summed over boots (trace):"]
    for ld, name in ([(str(x), n) for x, n in LOADS if x] + [(r, n) for r, n in RAISERS]):
        key = f"victim{ld}_foreign_by_vector"
        lines.append(f"  {name:<36} baseline {by_vector(tcg.get('baseline', []), key):<30} "
                     f"patched {by_vector(tcg.get('patched', []), key)}")
    lines += ["", "sections (not blocked) which woke ksoftirqd, by softirq pending but the RT task's own "
              f"at the end of their delay, summed over the {victim_src} boots:"]
    for ld, name in LOADS:
        key = f"victim{ld}_woke_pending"
        lines.append(f"  {name:<36} baseline {by_vector(victim.get('baseline', []), key):<30} "
                     f"patched {by_vector(victim.get('patched', []), key)}")
    lines += ["", "softirqs the raisers raised on the victim's CPU, whoever ran them "
              "(/proc/softirqs, summed over boots):"]
    for r, name in RAISERS[1:]:
        key = f"victim{r}_raised_on_cpu"
        lines.append(f"  {name:<36} baseline {by_vector(tcg.get('baseline', []), key):<30} "
                     f"patched {by_vector(tcg.get('patched', []), key)}")

    # rtla's own reading of its first sample over the threshold
    for v in ("baseline", "patched"):
        aa = next((m_.get("rtla_aa") for m_, _ in tcg.get(v, []) if m_.get("rtla_aa")), None)
        if aa:
            at = next((i for i, x in enumerate(aa) if x.startswith("## CPU")), len(aa))
            keep = [x.rstrip() for x in aa[at:] if x.strip()][:16]
            lines += ["", f"rtla timerlat auto-analysis, {v}, first boot:"] + [f"  {x}" for x in keep]

    # the victim's latency rows measured both ways: what -icount buys
    vkeys = [k for k, _, _, _, kind in ROWS if kind == "lat" and VICTIM_LAT.match(k)]
    lines += ["", f"victim latency rows ({len(vkeys)}), spread with and without -icount:"]
    for g in groups:
        told, rel = told_apart(gstat[g]["median"], gstat[g]["spread"], vkeys)
        gname = g.replace("icount", "TCG -icount shift=") if g != "tcg" else "plain TCG"
        lines.append(f"  {gname}: {told} of {len(vkeys)} tell baseline and patched apart, "
                     f"relative spread (max-min)/median: median "
                     f"{fmt(rel[len(rel) // 2] if rel else None, 2)}")

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
    # On a shared vector the RT task runs the other context's queued work
    # (the granularity is the vector) or waits for one of its callbacks:
    # in sum it must not pay more than unpatched, as far as the spread
    # over boots can tell.
    for ld, name in SHARED_LOADS:
        key = f"victim{ld}_paid_pct"
        vd = res["verdict"].get(key) or "-"
        lines.append(f"  share of the foreign work paid by the RT task by any route, {name}: "
                     f"patched/baseline {fmt(res['ratio'].get(key), 2)}, {vd} "
                     f"(target: not higher) {'MISSED' if vd in ('higher', '-') else 'met'}")
    # The same in time, for the module's loads and the real raisers: the
    # foreign handlers the RT task ran plus the time it blocked, medians
    # over boots (counts under TCG, no spread verdict).
    for ld, name in ([(str(x), n) for x, n in FOREIGN_LOADS] + [(r, n) for r, n in RAISERS[1:]]):
        key = f"victim{ld}_paid_us"
        if b.get(key) is None or p.get(key) is None:
            continue
        ok = p[key] <= b[key]
        rb = spread([x[0].get(key) for x in tcg.get("baseline", [])])
        rp = spread([x[0].get(key) for x in tcg.get("patched", [])])
        rng = (f" [boots {fmt(rb[0], 0)}-{fmt(rb[1], 0)} / {fmt(rp[0], 0)}-{fmt(rp[1], 0)}]"
               if rb and rp else "")
        lines.append(f"  time paid by the RT task by any route, {name}: {fmt(b[key], 0)} -> "
                     f"{fmt(p[key], 0)} us, {fmt(res['ratio'].get(key), 2)}{rng} "
                     f"(target <= 1) {'met' if ok else 'MISSED'}")
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

    pngs = plots(out, tcg, victim, title, victim_src)
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
        keys = [k for k in lat_keys if res["verdict"].get(k) in ("lower", "higher", "no diff.")]
        told, rel = told_apart(res["median"], res["spread"], keys)
        mid = f"{rel[len(rel) // 2]:.2f}" if rel else "-"
        p90 = f"{rel[int(len(rel) * 0.9)]:.2f}" if rel else "-"
        print(f"{name}: {res['accel']}, {told} of {len(keys)} latency rows tell baseline and "
              f"patched apart; relative spread median {mid}, p90 {p90}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--spread":
        sys.exit(spread_report(sys.argv[2:]))
    sys.exit(main())
