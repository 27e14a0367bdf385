#!/usr/bin/env python3
"""make cycle TRACE=1: every instruction of one BH cycle, function by function.

Two modes in one file:

  gdb -batch -x scripts/cycle_trace.py VMLINUX   (env: PORT, MODE, PCS)
      Attach to the QEMU gdb stub of a guest which loops the measuring
      module's cycle command, stop where the loop calls into the kernel
      (__tasklet_schedule() for the raise cycle, __local_bh_disable_ip() for
      the no-raise one, called from module text), then single-step
      ITERATIONS whole loop iterations and write their program counters to
      PCS. QEMU's gdb stub steps with interrupts and timers masked, so the
      trace is the loop's own path and nothing else.

  python3 scripts/cycle_trace.py table DIR
      DIR holds <variant>-<mode>.pcs and <variant>.vmlinux (symlinks) for
      variant baseline and patched: print, per mode, the instructions of the
      last traced iteration per function, baseline against patched.

x86_64 only (native gdb; the addresses of module text are above the kernel
image's, which is not randomised in these configs).
"""
import bisect
import collections
import os
import subprocess
import sys

ITERATIONS = 3
MODULE_TEXT = 0xFFFFFFFFA0000000  # MODULES_VADDR without KASLR
ENTRY = {"raise": "__tasklet_schedule", "noraise": "__local_bh_disable_ip"}


def trace():
    import gdb  # pylint: disable=import-error,import-outside-toplevel

    mode, out = os.environ["MODE"], os.environ["PCS"]
    gdb.execute("set pagination off")
    gdb.execute("target remote 127.0.0.1:%s" % os.environ["PORT"])
    entry = int(gdb.parse_and_eval("(unsigned long)&%s" % ENTRY[mode]))

    def called_from_module():
        sp = int(gdb.parse_and_eval("$sp"))
        ret = int(gdb.parse_and_eval("*(unsigned long *)%d" % sp)) & (2**64 - 1)
        return ret >= MODULE_TEXT

    gdb.execute("hbreak *%d" % entry)
    for _ in range(10000):
        gdb.execute("continue", to_string=True)
        if called_from_module():
            break
    else:
        raise gdb.GdbError("%s never called from the module" % ENTRY[mode])
    gdb.execute("delete")
    with open(out, "w") as f:
        for it in range(ITERATIONS):
            pcs = []
            while True:
                gdb.execute("stepi", to_string=True)
                pc = int(gdb.parse_and_eval("$pc")) & (2**64 - 1)
                pcs.append(pc)
                if pc == entry and called_from_module():
                    break
                if len(pcs) > 100000:
                    raise gdb.GdbError("no second entry after 100000 steps")
            f.write("# iteration %d: %d instructions\n" % (it, len(pcs)))
            f.writelines("%x\n" % pc for pc in pcs)
    gdb.execute("kill")


def symbols(vmlinux):
    out = subprocess.run(["nm", "-n", vmlinux], capture_output=True, text=True,
                         check=True).stdout
    addrs, names = [], []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tTwW":
            addrs.append(int(f[0], 16))
            names.append(f[2])
    return addrs, names


def last_iteration(path):
    its = []
    for line in open(path):
        if line.startswith("#"):
            its.append([])
        elif its:
            its[-1].append(int(line, 16))
    # An interrupt (the tick) may land in the first traced iteration, which
    # is longer then; the last two must agree, or the loop is not steady.
    if len(its) < ITERATIONS or len(its[-1]) != len(its[-2]):
        sys.exit("%s: %s iterations of differing length: not a steady loop"
                 % (path, [len(i) for i in its]))
    return its[-1]


def per_function(pcs, syms):
    addrs, names = syms
    count = collections.Counter()
    for pc in pcs:
        if pc >= MODULE_TEXT:
            count["(module loop)"] += 1
        else:
            # .constprop/.isra clones are the same function
            count[names[bisect.bisect_right(addrs, pc) - 1].split(".")[0]] += 1
    return count


def table(d):
    syms = {v: symbols(os.path.join(d, v + ".vmlinux")) for v in ("baseline", "patched")}
    print("# instructions of one loop iteration per function, traced with QEMU's gdb stub (TCG)")
    for mode in ("raise", "noraise"):
        c = {}
        for v in ("baseline", "patched"):
            path = os.path.join(d, "%s-%s.pcs" % (v, mode))
            if not os.path.exists(path):
                break
            c[v] = per_function(last_iteration(path), syms[v])
        if len(c) < 2:
            print("\n%s cycle: not traced" % mode)
            continue
        b, p = c["baseline"], c["patched"]
        tb, tp = sum(b.values()), sum(p.values())
        print("\n%s cycle %35s %8d %8d %+6d  ratio %.3f"
              % (mode, "total", tb, tp, tp - tb, tp / tb))
        for k in sorted(set(b) | set(p), key=lambda k: (-abs(p[k] - b[k]), k)):
            print("  %-42s %8d %8d %+6d" % (k, b[k], p[k], p[k] - b[k]))


def selftest():
    import tempfile  # pylint: disable=import-outside-toplevel

    syms = ([0x1000, 0x1100, 0x1200], ["f", "g.constprop.0", "h"])
    c = per_function([0x1000, 0x1004, 0x1100, 0x1210, MODULE_TEXT + 8], syms)
    assert c == {"f": 2, "g": 1, "h": 1, "(module loop)": 1}, c
    with tempfile.NamedTemporaryFile("w", suffix=".pcs", delete=False) as f:
        for it in range(ITERATIONS):
            f.write("# iteration %d: 2 instructions\n1000\n%x\n" % (it, 0x1100 + it))
    assert last_iteration(f.name) == [0x1000, 0x1100 + ITERATIONS - 1]
    with open(f.name, "a") as g:
        g.write("1000\n")  # the last iteration longer: not a steady loop
    try:
        last_iteration(f.name)
        raise AssertionError("an unsteady loop was accepted")
    except SystemExit:
        pass
    os.unlink(f.name)
    # the first iteration longer (an interrupt in it): the steady last one
    with tempfile.NamedTemporaryFile("w", suffix=".pcs", delete=False) as f:
        f.write("# iteration 0: 3 instructions\n1000\n1004\n1100\n")
        for it in range(1, ITERATIONS):
            f.write("# iteration %d: 2 instructions\n1000\n1100\n" % it)
    assert last_iteration(f.name) == [0x1000, 0x1100]
    os.unlink(f.name)
    print("cycle_trace.py selftest: ok")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "table":
        table(sys.argv[2])
    elif sys.argv[1:] == ["--selftest"]:
        selftest()
    else:
        trace()
