#!/usr/bin/env python3
"""Parse a guest serial log: KTAP results and kernel splats.

usage: ktap.py [--prefix P] [--results FILE] LOG
       ktap.py --selftest

Prints one line per failed case and per splat, then a summary line
'<prefix>: N passed, N failed, N skipped, N splats'. Exits 0 when nothing
failed and the log is clean, 1 otherwise. With --results, appends
'pass|fail|skip <prefix>.<case>' lines to FILE.
"""
import re
import sys

RESULT = re.compile(r'^(not ok|ok) \d+ (.*?)(?:\s+#\s*(.*))?$')
# A test which provokes a report on purpose brackets it with these lines;
# a splat which contains the announced text is accepted in between.
EXPECT_BEGIN = re.compile(r'softirq_kunit: expect begin (\S+): (.+)$')
EXPECT_END = re.compile(r'softirq_kunit: expect end (\S+)')
SPLATS = [
    re.compile(p) for p in (
        r'WARNING:', r'BUG:', r'Oops', r'Kernel panic',
        r'INFO: possible recursive locking',
        r'WARNING: possible circular locking',
        r'inconsistent lock state', r'possible irq lock inversion',
        r'suspicious RCU usage', r'Voluntary context switch within RCU',
        r'NOHZ tick-stop error', r'rcu_preempt detected stalls',
        r'rcu: INFO: .* detected stalls', r'self-detected stall',
        r'blocked for more than \d+ seconds',
        r'huh, entered softirq', r'lockdep is turned off',
        r'DEBUG_LOCKS_WARN_ON', r'Call Trace:',
    )
]


def clean(line):
    return line.replace('\r', '').rstrip('\n')


def parse(lines):
    """Return (results, splats, markers) from the lines of one serial log."""
    results, splats, markers = [], [], {}
    in_dmesg = False
    expected = None
    for raw in lines:
        line = clean(raw)
        # kernel messages on the console carry a timestamp prefix
        msg = re.sub(r'^\[\s*\d+\.\d+\]\s*', '', line)
        if line.startswith('softirq-rt: '):
            key = line[len('softirq-rt: '):]
            if key == 'dmesg begin':
                in_dmesg = True
            elif key == 'dmesg end':
                in_dmesg = False
            markers[key.split(' ')[0] + ' ' + (key.split(' ')[1] if ' ' in key else '')] = key
            continue
        # a userspace test's own output, passed through as KTAP
        # diagnostics (make regress): neither results nor kernel reports
        if line.startswith('#'):
            continue
        m = EXPECT_BEGIN.search(msg)
        if m:
            expected = m.group(2).strip()
            continue
        if EXPECT_END.search(msg):
            expected = None
            continue
        if any(p.search(msg) for p in SPLATS):
            if expected and expected in msg:
                continue
            if msg not in splats:
                splats.append(msg)
            continue
        if in_dmesg or msg != line:
            # the kernel's own messages (timestamped) are not results
            continue
        m = RESULT.match(line)
        if not m:
            continue
        status, name, directive = m.group(1), m.group(2).strip(), m.group(3) or ''
        if directive.upper().startswith('SKIP'):
            results.append(('skip', name, directive))
        elif status == 'ok':
            results.append(('pass', name, directive))
        else:
            results.append(('fail', name, directive))
    return results, splats, markers


def selftest():
    log = """\
[    1.0] Linux version 7.3.4
softirq-rt: guest up at 1.2 s
TAP version 13
1..3
ok 1 smoke.a
not ok 2 smoke.b # wrong
ok 3 smoke.c # SKIP no module
[    2.0] ------------[ cut here ]------------
[    2.1] WARNING: CPU: 0 PID: 1 at kernel/softirq.c:1 foo
softirq-rt: dmesg begin
ok 9 not.a.result
[    2.1] WARNING: CPU: 0 PID: 1 at kernel/softirq.c:1 foo
softirq-rt: dmesg end
"""
    res, splats, markers = parse(log.splitlines())
    assert [r[0] for r in res] == ['pass', 'fail', 'skip'], res
    assert res[1][2] == 'wrong', res
    assert len(splats) == 1 and 'WARNING' in splats[0], splats
    assert 'guest up' in markers, markers
    res, splats, _ = parse(['ok 1 x', 'NOHZ tick-stop error: local softirq work is pending',
                            '[   12.000000] ok 1 softirq_no_loss'])
    assert len(res) == 1 and len(splats) == 1, (res, splats)
    nohz = '[    3.0] NOHZ tick-stop error: local softirq work is pending, handler #40!!!'
    res, splats, _ = parse([
        '[    2.9] softirq_kunit: expect begin 0badf00d: NOHZ tick-stop',
        nohz, '[    3.1] WARNING: CPU: 1 PID: 9 at kernel/softirq.c:1 foo',
        '[    3.2] softirq_kunit: expect end 0badf00d', nohz])
    assert len(splats) == 2 and 'WARNING' in splats[0] and 'NOHZ' in splats[1], splats
    res, splats, _ = parse(['# WARNING: test output', '# ok 1 nested', 'ok 1 regress',
                            '[    4.0] WARNING: CPU: 0 PID: 1 at net/core/dev.c:1 foo'])
    assert len(res) == 1 and len(splats) == 1 and 'net/core' in splats[0], (res, splats)
    print('ktap.py selftest: ok')
    return 0


def main(argv):
    if argv[1:] == ['--selftest']:
        return selftest()
    prefix, resfile, args = '', None, argv[1:]
    while len(args) > 1 and args[0].startswith('--'):
        if args[0] == '--prefix':
            prefix, args = args[1], args[2:]
        elif args[0] == '--results':
            resfile, args = args[1], args[2:]
        else:
            break
    if len(args) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    with open(args[0], errors='replace') as f:
        results, splats, _ = parse(f)
    counts = {'pass': 0, 'fail': 0, 'skip': 0}
    for status, name, directive in results:
        counts[status] += 1
        if status == 'fail':
            print(f'{prefix}: FAIL {name}' + (f' ({directive})' if directive else ''))
    for s in splats:
        print(f'{prefix}: SPLAT {s}')
    if resfile:
        with open(resfile, 'a') as f:
            for status, name, _ in results:
                f.write(f'{status} {prefix}.{name}\n')
            f.write(f'{"fail" if splats else "pass"} {prefix}.log_clean\n')
    print(f'{prefix}: {counts["pass"]} passed, {counts["fail"]} failed, '
          f'{counts["skip"]} skipped, {len(splats)} splats')
    return 0 if not counts['fail'] and not splats and results else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
