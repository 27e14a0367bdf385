#!/usr/bin/env python3
"""make regress's table and verdict, from the two guests' serial logs.

usage: regress.py RUNS BASELINE_CFG PATCHED_CFG OUT ONLY TEST[:SECS[:ARGS]]...
       regress.py --selftest

RUNS/regress-<cfg>/serial.log is each guest's log (scripts/guest/regress.sh
writes one KTAP line per test and '# regress: T start|exit' brackets around
its output). Writes OUT/table.md (per test: outcome and seconds on each
kernel, and why it failed) and OUT/summary, prints both, and exits 0 when
the verdict is PASS: no test that passes on the baseline fails on the
patched kernel, neither log has a splat, and both guests finished. ONLY
(baseline or patched, or empty) is the kernel that ran alone; its tests
are ones that pass on the baseline, so each must pass.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ktap import clean, parse  # noqa: E402

WHY = re.compile(r'FAIL|not ok|Error|error:|No such|not found')


def load_lines(lines):
    """Outcome, seconds, first failure reason and 'fail' lines per test."""
    results, splats, markers = parse(lines)
    res = {name: (status, directive) for status, name, directive in results}
    secs, why, fails, cur = {}, {}, {}, None
    for raw in lines:
        line = clean(raw)
        m = re.match(r'# regress: (\S+) start', line)
        if m:
            cur = m.group(1)
            continue
        m = re.match(r'# regress: (\S+) exit (\d+) after (\d+)s', line)
        if m:
            secs[m.group(1)] = int(m.group(3))
            cur = None
            continue
        if cur and line.startswith('# '):
            # the subtests a script reports as failed without failing
            if re.search(r'\bfail(ed)?\b', line, re.I):
                fails[cur] = fails.get(cur, 0) + 1
            if cur not in why and WHY.search(line):
                why[cur] = line[2:].strip()[:90]
    finished = 'dmesg end' in ' '.join(markers)
    return dict(res=res, splats=splats, secs=secs, why=why, fails=fails,
                finished=finished)


def load(runs, cfg):
    log = os.path.join(runs, 'regress-' + cfg, 'serial.log')
    if not os.path.exists(log):
        return None
    with open(log, errors='replace') as f:
        return load_lines(f.read().splitlines())


def cell(kernels, k, n):
    if kernels[k] is None:
        return 'not run', ''
    st, d = kernels[k]['res'].get(n, ('missing', ''))
    if st == 'pass' and d.startswith('failed once'):
        st = 'pass, on retry'
    s = kernels[k]['secs'].get(n)
    return st, (f'{s}' if s is not None else '-')


def verdict(kernels, names, only):
    """Return (table rows, summary lines, ok)."""
    if only:
        kernels = {k: (v if k == only else None) for k, v in kernels.items()}
    rows, regress, both = [], [], []
    for n in names:
        (bs, bt), (ps, pt) = cell(kernels, 'baseline', n), cell(kernels, 'patched', n)
        note = ''
        if only:
            pass
        elif bs.startswith('pass') and not ps.startswith('pass'):
            regress.append(n)
            note = 'REGRESSION: ' + (kernels['patched']['why'].get(n, '')
                                     if kernels['patched'] else '')
        elif not bs.startswith('pass') and not ps.startswith('pass') and bs != 'skip':
            base = kernels['baseline'] or {}
            why = base.get('why', {}).get(n, '')
            d = base.get('res', {}).get(n, ('', ''))[1]
            both.append(n)
            note = 'fails on both: ' + (d + '; ' if d else '') + why
        elif not bs.startswith('pass') and ps.startswith('pass'):
            note = 'passes only patched'
        elif bs == 'pass' and ps == 'pass, on retry':
            note = 'patched needed a retry, baseline did not'
        if kernels['baseline'] and kernels['patched']:
            bf = kernels['baseline']['fails'].get(n, 0)
            pf = kernels['patched']['fails'].get(n, 0)
            if pf > bf:
                note += ('; ' if note else '') + f"'fail' lines: baseline {bf}, patched {pf}"
        rows.append(f'| {n} | {bs} | {bt} | {ps} | {pt} | {note} |')
    summary = []
    for k in ('baseline', 'patched'):
        r = kernels[k]
        if r is None:
            summary.append(f'{k}: not run')
            continue
        c = {'pass': 0, 'fail': 0, 'skip': 0}
        for n in names:
            st = r['res'].get(n, ('fail', ''))[0]
            c[st if st in c else 'fail'] += 1
        summary.append(f"{k}: {c['pass']} passed, {c['fail']} failed, {c['skip']} skipped, "
                       f"{len(r['splats'])} splats, {sum(r['secs'].values())} s of tests"
                       + ('' if r['finished'] else ', GUEST DID NOT FINISH'))
        for s in r['splats'][:5]:
            summary.append(f'  {k} splat: {s[:150]}')
    summary.append(f'regressions (pass on baseline, not on patched): {len(regress)} '
                   f'{" ".join(regress)}')
    summary.append(f'failing on both: {len(both)} {" ".join(both)}')
    ran = {k: r for k, r in kernels.items() if r is not None}
    ok = (not regress and len(ran) == (1 if only else 2)
          and all(not r['splats'] and r['finished'] for r in ran.values()))
    # One kernel alone (ONLY=, the CI subset in make check): its tests are
    # ones which pass on the baseline (docs/regress.md), so each must pass.
    if only and ok:
        r = kernels[only]
        bad = [n for n in names if r['res'].get(n, ('fail', ''))[0] == 'fail']
        if bad:
            summary.append(f'{only} alone: failed {" ".join(bad)}')
            ok = False
    summary.append('verdict: ' + ('PASS' if ok else 'FAIL'))
    return rows, summary, ok


def guest_log(outcomes, splat=False, finished=True):
    """A serial log as scripts/guest/regress.sh writes it, for the selftest."""
    lines = ['softirq-rt: guest up at 1.0 s', 'TAP version 13', f'1..{len(outcomes)}']
    for i, (name, rc, out) in enumerate(outcomes, 1):
        lines.append(f'# regress: {name} start (timeout 60s)')
        lines += ['# ' + o for o in out]
        lines.append(f'# regress: {name} exit {rc} after {10 * i}s')
        lines.append(f'ok {i} {name}' if rc == 0 else f'not ok {i} {name} # exit {rc}, twice')
    if splat:
        lines.append('[   50.000000] BUG: MAX_LOCKDEP_CHAIN_HLOCKS too low!')
    lines.append('softirq-rt: dmesg begin')
    if finished:
        lines.append('softirq-rt: dmesg end')
    return lines


def selftest():
    import tempfile
    names = ['net/a.sh', 'net/b.sh', 'net/c.sh']
    good = [('net/a.sh', 0, ['TEST: x [ OK ]']),
            ('net/b.sh', 1, ['TEST: y [FAIL]', 'Error: no socat']),
            ('net/c.sh', 0, [])]
    base = load_lines(guest_log(good))
    assert base['secs'] == {'net/a.sh': 10, 'net/b.sh': 20, 'net/c.sh': 30}, base['secs']
    assert base['why']['net/b.sh'] == 'TEST: y [FAIL]', base['why']
    assert base['finished'] and not base['splats']

    def run(b, p, only='', names=names):
        return verdict({'baseline': b, 'patched': p}, names, only)

    # the same outcomes on both: PASS, the common failure listed with its
    # reason, counts and seconds in the summary
    rows, summary, ok = run(base, load_lines(guest_log(good)))
    assert ok and rows[1].endswith('| fails on both: exit 1, twice; TEST: y [FAIL] |'), rows
    assert rows[0] == '| net/a.sh | pass | 10 | pass | 10 |  |', rows
    assert summary[0] == 'baseline: 2 passed, 1 failed, 0 skipped, 0 splats, 60 s of tests', summary
    assert 'failing on both: 1 net/b.sh' in summary and summary[-1] == 'verdict: PASS', summary
    # a baseline pass that fails patched is a regression, with its reason
    bad = [good[0], good[1], ('net/c.sh', 1, ['TEST: z [FAIL]'])]
    rows, summary, ok = run(base, load_lines(guest_log(bad)))
    assert not ok and '| REGRESSION: TEST: z [FAIL]' in rows[2], rows
    assert 'regressions (pass on baseline, not on patched): 1 net/c.sh' in summary, summary
    assert "'fail' lines: baseline 0, patched 1" in rows[2], rows
    # fewer 'fail' lines patched is not flagged
    rows, _, _ = run(load_lines(guest_log(bad)), base)
    assert "'fail' lines" not in rows[2] and 'passes only patched' in rows[2], rows
    # a pass on retry is a pass on either kernel
    retry = guest_log(good)
    retry[retry.index('ok 1 net/a.sh')] = 'ok 1 net/a.sh # failed once (1), passed on retry'
    rows, _, ok = run(base, load_lines(retry))
    assert ok and 'pass, on retry' in rows[0] and 'needed a retry' in rows[0], rows
    failed_a = guest_log([('net/a.sh', 1, []), good[1], good[2]])
    rows, _, ok = run(load_lines(retry), load_lines(failed_a))
    assert not ok and 'REGRESSION' in rows[0], rows
    # a test that skips on the baseline is not a common failure
    skip = guest_log(good)
    skip[skip.index('not ok 2 net/b.sh # exit 1, twice')] = 'ok 2 net/b.sh # SKIP no tool'
    rows, summary, ok = run(load_lines(skip), load_lines(guest_log(good)))
    assert ok and rows[1].endswith('|  |') and 'failing on both: 0 ' in summary, rows
    # a splat or a guest that did not finish fails it, on either kernel
    for log in (guest_log(good, splat=True), guest_log(good, finished=False)):
        for b, p in ((load_lines(log), base), (base, load_lines(log))):
            _, summary, ok = run(b, p)
            assert not ok and summary[-1] == 'verdict: FAIL', summary
    _, summary, _ = run(base, load_lines(guest_log(good, splat=True)))
    assert summary[1].startswith('patched: 2 passed') and ', 1 splats' in summary[1], summary
    assert summary[2] == '  patched splat: BUG: MAX_LOCKDEP_CHAIN_HLOCKS too low!', summary
    _, summary, _ = run(base, load_lines(guest_log(good, finished=False)))
    assert summary[1].endswith(', GUEST DID NOT FINISH'), summary
    # a missing log fails unless that kernel was not asked for
    _, _, ok = run(None, load_lines(guest_log(good)))
    assert not ok
    # ONLY=patched: every test must pass, the other kernel is ignored
    alone = load_lines(guest_log([good[0], good[2]]))
    _, summary, ok = run(None, alone, 'patched', ['net/a.sh', 'net/c.sh'])
    assert ok and 'baseline: not run' in summary, summary
    _, summary, ok = run(base, load_lines(guest_log(good)), 'patched')
    assert not ok and 'patched alone: failed net/b.sh' in summary, summary
    # a test without a result line (the guest died in it) has failed
    _, summary, ok = run(None, alone, 'patched', ['net/a.sh', 'net/c.sh', 'net/d.sh'])
    assert not ok and 'patched alone: failed net/d.sh' in summary, summary
    # main(): the files it writes and its exit code
    with tempfile.TemporaryDirectory() as d:
        for cfg, log in (('b', guest_log(good)), ('p', guest_log(bad))):
            os.makedirs(os.path.join(d, 'regress-' + cfg))
            with open(os.path.join(d, 'regress-' + cfg, 'serial.log'), 'w') as f:
                f.write('\n'.join(log) + '\n')
        devnull = open(os.devnull, 'w')
        stdout, stderr, sys.stdout, sys.stderr = sys.stdout, sys.stderr, devnull, devnull
        try:
            rc_bad = main(['regress.py', d, 'b', 'p', d, ''] + names)
            rc_good = main(['regress.py', d, 'b', 'b', d, ''] + names)
            rc_usage = main(['regress.py', d, 'b', 'p', d])
            rc_none = main(['regress.py', d, 'b', 'b', d, ''])
        finally:
            sys.stdout, sys.stderr = stdout, stderr
            devnull.close()
        assert (rc_bad, rc_good, rc_usage, rc_none) == (1, 0, 2, 0), (rc_bad, rc_good, rc_usage, rc_none)
        with open(os.path.join(d, 'summary')) as f:
            assert f.read().endswith('verdict: PASS\n')
        with open(os.path.join(d, 'table.md')) as f:
            assert f.read().startswith('| test | baseline | s | patched | s | note |\n')
    print('regress.py selftest: ok')
    return 0


def main(argv):
    if argv[1:] == ['--selftest']:
        return selftest()
    if len(argv) < 6:
        print(__doc__.strip().split('\n\n')[1], file=sys.stderr)
        return 2
    runs, base, patched, out, only, tests = argv[1], argv[2], argv[3], argv[4], argv[5], argv[6:]
    kernels = {'baseline': load(runs, base), 'patched': load(runs, patched)}
    names = [t.split(':', 1)[0] for t in tests]
    rows, summary, ok = verdict(kernels, names, only)
    table = ('| test | baseline | s | patched | s | note |\n|---|---|---|---|---|---|\n'
             + '\n'.join(rows) + '\n')
    with open(os.path.join(out, 'table.md'), 'w') as f:
        f.write(table)
    with open(os.path.join(out, 'summary'), 'w') as f:
        f.write('\n'.join(summary) + '\n')
    print(table)
    print('\n'.join(summary))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
