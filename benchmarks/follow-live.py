#!/usr/bin/env python3
"""sluice follow on a live log, against tail -F: rotations, copytruncate, latency.

Usage: benchmarks/follow-live.py SLUICE [rotations|copytruncate|latency|idle|catchup|all] [RUNS]

rotations     A writer appends numbered lines, 5,000 a second, opening and closing the file
              for every 50 lines (as loggers that reopen do); every second the file is rotated,
              in turn by rename and create, by a shift (.1 to .2, the file to .1, then create)
              and by delete and re-create. `sluice follow` and `tail -F -n +1` run throughout;
              then sluice stops at --until-idle and tail is stopped as long after. For each, the
              lines missing, repeated and out of order.
copytruncate  RUNS runs (default 20): the writer as above for 1.5 s; at 0.75 s, from another
              thread, `cp FILE FILE.1` then, 25 ms later (a large log's copy), the file truncated
              to 0 (logrotate's copytruncate): lines written in those 25 ms are in neither file.
              Twice: the follower live, and stopped (SIGSTOP) from 0.5 s to 1 s, so it is behind. Each run: the bytes missing
              from DEST, whether sluice reported a loss (exit 2, "lost at least N bytes") and N.
latency       100 lines appended one at a time to a followed file; for each, the time until
              DEST has grown by it. The median and the 90th percentile.
idle          A followed file that does not change, for 10 s: the CPU time sluice used
              (user + system, from /proc/PID/stat), as a share of one core.
catchup       A backlog of 1 GiB (in the page cache) shipped to DEST without syncing: the time of
              `sluice follow --no-fsync --until-idle 50ms`, less the 50 ms it waits once all is
              shipped, against `cat FILE >> DEST`, RUNS alternating runs
              (default 5) and their medians; then sluice's peak RSS for the same run.
"""
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

RATE, BATCH = 5000, 50


PAD = ""  # copytruncate pads each line to 100 bytes, so its follower can fall behind a pipe


def line(n):
    return f"{n}{PAD[len(str(n)):]}\n"


def lines(first, count):
    return "".join(line(n) for n in range(first, first + count))


def append(path, text):
    with open(path, "a") as f:
        f.write(text)


def writer(path, seconds, rotate=None, on_batch=None):
    """Appends batches of BATCH numbered lines at RATE lines a second; returns the count."""
    batches = int(seconds * RATE / BATCH)
    start = time.monotonic()
    for b in range(batches):
        if rotate and b and b % (RATE // BATCH) == 0:
            rotate(b // (RATE // BATCH))
        if on_batch:
            on_batch(b)
        append(path, lines(b * BATCH + 1, BATCH))
        delay = start + (b + 1) * BATCH / RATE - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    return batches * BATCH


def judge(text, total):
    got = [int(x) for x in text.split()]
    seen = set(got)
    return {
        "lines": len(got),
        "missing": sum(1 for n in range(1, total + 1) if n not in seen),
        "repeated": len(got) - len(seen),
        "out_of_order": sum(1 for a, b in zip(got, got[1:]) if b < a),
    }


def rotations(sluice):
    work = tempfile.mkdtemp(prefix="follow-live-")
    log = os.path.join(work, "app.log")
    append(log, "")

    def rotate(k):
        kind = k % 3
        if kind == 1:
            os.rename(log, log + ".1")
        elif kind == 2:
            if os.path.exists(log + ".1"):
                os.rename(log + ".1", log + ".2")
            os.rename(log, log + ".1")
        else:
            os.unlink(log)

    follow = subprocess.Popen([sluice, "follow", log, "-o", os.path.join(work, "dest"), "--until-idle", "2s"],
                              stderr=subprocess.PIPE, text=True)
    tail_out = open(os.path.join(work, "tail.out"), "w")
    tail = subprocess.Popen(["tail", "-F", "-n", "+1", log], stdout=tail_out, stderr=subprocess.DEVNULL)
    time.sleep(0.3)  # both have the file open before the first line
    total = writer(log, 12, rotate=rotate)
    follow_err = follow.communicate()[1]
    time.sleep(2)
    tail.send_signal(signal.SIGTERM)
    tail.wait()
    tail_out.close()
    with open(os.path.join(work, "dest")) as f:
        s = judge(f.read(), total)
    with open(os.path.join(work, "tail.out")) as f:
        t = judge(f.read(), total)
    print(f"rotations: {total} lines, 12 rotations (4 rename-and-create, 4 shifts, 4 delete-and-recreate)")
    print(f"  sluice follow (exit {follow.returncode}): {s}")
    print(f"  tail -F -n +1:               {t}")
    if follow_err.strip():
        print("  sluice said: " + follow_err.strip().replace("\n", "\n               "))
    shutil.rmtree(work)


def copytruncate(sluice, runs, stopped, gap=0.025):
    global PAD
    PAD = " " * 99
    print(f"copytruncate: {runs} runs of 7,500 lines of 100 bytes, the copytruncate at 0.75 s, {gap * 1000:.0f} ms between the copy and the truncation, "
          + ("the follower stopped (SIGSTOP) from 0.5 s to 1 s" if stopped else "the follower live"))
    honest = 0
    for run in range(runs):
        work = tempfile.mkdtemp(prefix="follow-ct-")
        log = os.path.join(work, "app.log")
        append(log, "")
        dest = os.path.join(work, "dest")
        follow = subprocess.Popen([sluice, "follow", log, "-o", dest, "--until-idle", "1s"], stderr=subprocess.PIPE, text=True)
        time.sleep(0.2)

        def rotate():
            shutil.copyfile(log, log + ".1")
            time.sleep(gap)  # the copy of a large log takes this long: the writer goes on
            os.truncate(log, 0)

        # logrotate's copytruncate from another thread while the writer writes: the bytes
        # written between the copy and the truncation are in neither file.
        rotator = threading.Timer(0.75, rotate)
        rotator.start()
        if stopped:
            # The follower stopped from 0.5 s to 1.0 s: it falls behind, the rotation in between.
            threading.Timer(0.5, follow.send_signal, [signal.SIGSTOP]).start()
            threading.Timer(1.0, follow.send_signal, [signal.SIGCONT]).start()
        total = writer(log, 1.5)
        rotator.join()
        err = follow.communicate()[1]
        with open(os.path.join(work, "dest")) as f:
            text = f.read()
        expected = sum(len(line(n)) for n in range(1, total + 1))
        got = judge(text, total)
        present = set(text.split())
        missing_bytes = sum(len(line(n)) for n in range(1, total + 1) if str(n) not in present)
        reported = sum(int(m) for m in re.findall(r"lost at least (\d+) bytes", err))
        ok = missing_bytes == 0 or (follow.returncode == 2 and reported <= missing_bytes)
        honest += ok
        uncounted = "cannot be counted" in err
        print(f"  run {run + 1:2}: missing {got['missing']} lines ({missing_bytes} of {expected} bytes), repeated {got['repeated']}, "
              f"exit {follow.returncode}, reported lost at least {reported} bytes"
              f"{', and an uncountable loss' if uncounted else ''}: {'ok' if ok else 'NOT OK'}")
        shutil.rmtree(work)
    print(f"  {honest} of {runs} runs: nothing missing, or a loss reported (exit 2) whose count is a lower bound of what is missing")


def latency(sluice):
    work = tempfile.mkdtemp(prefix="follow-lat-")
    log, dest = os.path.join(work, "app.log"), os.path.join(work, "dest")
    append(log, "start\n")
    follow = subprocess.Popen([sluice, "follow", log, "-o", dest])
    while not os.path.exists(dest) or os.path.getsize(dest) < 6:
        time.sleep(0.001)
    delays = []
    for n in range(100):
        size = os.path.getsize(dest)
        start = time.monotonic()
        append(log, f"line {n}\n")
        while os.path.getsize(dest) <= size:
            time.sleep(0.0002)
        delays.append((time.monotonic() - start) * 1000)
        time.sleep(0.01)
    follow.send_signal(signal.SIGINT)
    follow.wait()
    delays.sort()
    print(f"latency: 100 lines, median {statistics.median(delays):.2f} ms, 90th percentile {delays[89]:.2f} ms, "
          f"max {delays[-1]:.2f} ms (exit {follow.returncode})")
    shutil.rmtree(work)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def idle(sluice):
    work = tempfile.mkdtemp(prefix="follow-idle-")
    log = os.path.join(work, "app.log")
    append(log, lines(1, 1000))
    follow = subprocess.Popen([sluice, "follow", log, "-o", os.path.join(work, "dest"), "--no-fsync"])
    time.sleep(1)
    before = cpu_seconds(follow.pid)
    time.sleep(10)
    used = cpu_seconds(follow.pid) - before
    follow.send_signal(signal.SIGINT)
    follow.wait()
    print(f"idle: {used:.3f} s of CPU in 10 s of an unchanging followed file: {used / 10 * 100:.2f} % of one core")
    shutil.rmtree(work)


def catchup(sluice, runs):
    work = tempfile.mkdtemp(prefix="follow-catchup-")
    big, dest = os.path.join(work, "big"), os.path.join(work, "dest")
    size = 1 << 30
    with open(big, "wb") as f:
        block = bytes(range(256)) * 4096
        for _ in range(size // len(block)):
            f.write(block)
    subprocess.run(["cat", big], stdout=subprocess.DEVNULL, check=True)  # in the page cache

    def one_sluice():
        # Until it stops at --until-idle 50ms, less those 50 ms: the time to ship it all.
        if os.path.exists(dest):
            os.unlink(dest)
        start = time.monotonic()
        subprocess.run([sluice, "follow", big, "-o", dest, "--no-fsync", "--until-idle", "50ms"], check=True)
        return time.monotonic() - start - 0.05

    def one_cat():
        if os.path.exists(dest):
            os.unlink(dest)
        start = time.monotonic()
        with open(dest, "ab") as out:
            subprocess.run(["cat", big], stdout=out, check=True)
        return time.monotonic() - start

    times = {"sluice": [], "cat": []}
    for _ in range(runs):
        times["sluice"].append(one_sluice())
        times["cat"].append(one_cat())
    s, c = statistics.median(times["sluice"]), statistics.median(times["cat"])
    print("  sluice: " + " ".join(f"{t:.3f}" for t in times["sluice"]) + "; cat: " + " ".join(f"{t:.3f}" for t in times["cat"]))
    print(f"catchup: 1 GiB backlog, {runs} alternating runs: sluice follow median {s:.3f} s ({size / s / 1e9:.2f} GB/s), "
          f"cat >> median {c:.3f} s ({size / c / 1e9:.2f} GB/s): sluice at {c / s:.2f}x cat's speed")
    os.unlink(dest)
    rss = subprocess.run(["/usr/bin/time", "-f", "%M", sluice, "follow", big, "-o", dest, "--no-fsync", "--until-idle", "100ms"],
                         capture_output=True, text=True).stderr.strip().splitlines()[-1]
    print(f"catchup: peak RSS of sluice follow shipping the 1 GiB backlog: {int(rss) / 1024:.1f} MiB")
    shutil.rmtree(work)


if __name__ == "__main__":
    sluice = sys.argv[1]
    what = sys.argv[2] if len(sys.argv) > 2 else "all"
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    if what in ("rotations", "all"):
        rotations(sluice)
    if what in ("copytruncate", "all"):
        copytruncate(sluice, runs, stopped=False)
        copytruncate(sluice, runs, stopped=True)
    if what in ("latency", "all"):
        latency(sluice)
    if what in ("idle", "all"):
        idle(sluice)
    if what in ("catchup", "all"):
        catchup(sluice, runs if len(sys.argv) > 3 else 5)
