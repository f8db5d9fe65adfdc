#!/usr/bin/env python3
"""sluice follow on a live log, against tail -F: rotations, copytruncate, latency.

Usage: benchmarks/follow-live.py SLUICE [rotations|copytruncate|latency|idle|catchup|all] [RUNS]
       benchmarks/follow-live.py SLUICE crash|crash-gzip [SEED] [--no-copytruncate]
       benchmarks/follow-live.py SLUICE catchup-state [RUNS]

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
crash         The writer as above for 30 s, the file rotated every second in turn by rename and
              create (to a name of its own, app.log-rN), a shift (every app.log.N to .N+1, none
              dropped, the file to .1), delete and re-create, and copytruncate (to app.log-cN,
              25 ms between the copy and the truncation; not with --no-copytruncate). A follower
              `sluice follow --state` is killed (SIGKILL) at 20 random moments, down 0 to 0.6 s
              each time, and started again with the same command; a deletion waits until the live
              follower holds the file open, and no kill comes until the state has moved past the
              deleted file (else the file is legitimately gone). After every kill, DEST's first
              LEN bytes (LEN from the state) are kept to compare with the final DEST. An epilogue:
              the live follower killed, 500 lines appended to the file, the file deleted while no
              follower runs, 500 lines in a new file; the final run (--until-idle 2s) must exit 2,
              say the file was gone, and miss exactly the deleted file's lines past its checkpoint.
              Judged: every line once and in order, but those (and lines written inside a
              copytruncate's window, only if a loss was reported); every durable prefix a prefix
              of the final DEST; losses reported on any run's stderr.
crash-gzip    The same with -z -p 2; also `gzip -t` of each durable prefix (head -c LEN DEST)
              and of the whole DEST, which is judged decompressed.
catchup-state The cost of exactly once: a 1 GiB log backlog generated in TMPDIR (default /tmp),
              in the page cache, shipped by `sluice follow --state st FILE -o DEST --until-idle 1s`
              against `cat FILE >> DEST; sync`, then with -z -p 2 against
              `pigz -p 2 < FILE > DEST; sync`, RUNS alternating runs (default 5), `sync` before
              each (untimed). sluice's time is until the state first records DEST's final length
              (all of it durable and recorded); its time less the 1 s idle wait is shown too.
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


def state_fields(path):
    """The state file's destination length and its `read` lines' (device, inode), or None."""
    try:
        with open(path) as f:
            text = f.read().splitlines()
    except FileNotFoundError:
        return None
    if len(text) < 3 or not text[2].startswith("destination "):
        return None
    length = int(text[2].split()[3])
    reading = [(int(l.split()[1]), int(l.split()[2]), int(l.split()[8])) for l in text if l.startswith("read ")]
    return length, reading


def state_text(path):
    try:
        with open(path) as f:
            return f.read().strip().replace("\n", " | ")
    except FileNotFoundError:
        return "(none)"


def descriptors(pid):
    found = []
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                found.append(f"{fd}:{os.path.basename(target)}/{os.stat(f'/proc/{pid}/fd/{fd}').st_ino}")
            except OSError:
                pass
    except OSError:
        return "(gone)"
    return " ".join(found)


def holds_open(pid, st):
    """Whether process pid has a descriptor on the file whose stat is st."""
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                s = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if (s.st_dev, s.st_ino) == (st.st_dev, st.st_ino):
                return True
    except OSError:
        pass
    return False


def crash(sluice, gzip_out, kills=20, seconds=30, seed=None, copytruncates=True):
    """Rotations of four kinds under a follower --state killed (SIGKILL) KILLS times and restarted."""
    import hashlib
    import random
    seed = seed if seed is not None else int(time.time())
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="follow-crash-")
    log, dest, st = os.path.join(work, "app.log"), os.path.join(work, "dest"), os.path.join(work, "st")
    append(log, "")
    command = [sluice, "follow", "--state", st, log, "-o", dest] + (["-z", "-p", "2"] if gzip_out else [])
    kill_lock = threading.Lock()  # held while a follower is down, and around a deletion until it is recorded past
    shared = {"next": 1, "proc": None, "runs": 0, "errors": [], "windows": [], "unexpected_exits": 0,
              "deletions": 0, "deletion_timeouts": 0, "open_timeouts": 0, "copytruncates": 0, "renames": 0, "shifts": 0}
    prefixes = []  # (kill, length, sha256 of DEST's first length bytes, gzip -t result)
    events = []  # what happened when, kept in WORK/events with the files when the run is not OK

    def start():
        shared["runs"] += 1
        err = open(os.path.join(work, f"stderr.{shared['runs']}"), "w")
        shared["errors"].append(err.name)
        shared["proc"] = subprocess.Popen(command, stderr=err)
        err.close()

    def rotate(k):
        kind = k % 4 if copytruncates else k % 3 + 1
        events.append(f"{time.monotonic() - begin:7.3f} s: rotation {k} ({['copytruncate', 'rename', 'shift', 'delete'][kind]}) "
                      f"before line {shared['next'] + BATCH}, of inode {os.stat(log).st_ino}")
        if kind == 1:  # rename and create, to a name of its own (dateext): nothing is overwritten
            os.rename(log, f"{log}-r{k:03}")
            shared["renames"] += 1
        elif kind == 2:  # shift: every .N to .N+1 (none dropped), the file to .1
            numbered = sorted((int(n[len("app.log."):]) for n in os.listdir(work)
                               if n.startswith("app.log.") and n[len("app.log."):].isdigit()), reverse=True)
            for n in numbered:
                os.rename(f"{log}.{n}", f"{log}.{n + 1}")
            os.rename(log, log + ".1")
            shared["shifts"] += 1
        elif kind == 3:  # delete and re-create, only once a live follower holds the file open
            kill_lock.acquire()
            target = os.stat(log)
            deadline = time.monotonic() + 10
            while not holds_open(shared["proc"].pid, target) and time.monotonic() < deadline:
                time.sleep(0.002)
            if not holds_open(shared["proc"].pid, target):
                # Not deleted: a rename instead, and said.
                shared["open_timeouts"] += 1
                events.append(f"rotation {k}: the follower (run {shared['runs']}, exit status {shared['proc'].poll()}) did not open "
                              f"{target.st_ino} in 10 s; its descriptors: {descriptors(shared['proc'].pid)}; state: {state_text(st)}; "
                              f"renamed to {log}-n{k:03} instead")
                os.rename(log, f"{log}-n{k:03}")
                kill_lock.release()
                return
            held = open(log, "rb")  # keeps the inode from being reused by the new file
            before = {(s.st_dev, s.st_ino) for s in (os.stat(os.path.join(work, n)) for n in os.listdir(work))}
            os.unlink(log)
            append(log, "")
            created = os.stat(log)
            shared["deletions"] += 1

            def recorded_past():
                # No kill until the state no longer reads the deleted file and reads one born after
                # it: a checkpoint from before the deletion may not know the deleted file at all.
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline:
                    s = state_fields(st)
                    if s and all((d, i) != (target.st_dev, target.st_ino) for d, i, _ in s[1]) \
                            and any((d, i) not in before for d, i, _ in s[1]):
                        break
                    time.sleep(0.01)
                else:
                    shared["deletion_timeouts"] += 1
                    events.append(f"rotation {k}: in 10 s the state did not move from the deleted {target.st_ino} to the new "
                                  f"{created.st_ino}; follower run {shared['runs']} (exit status {shared['proc'].poll()}) "
                                  f"descriptors: {descriptors(shared['proc'].pid)}; state: {state_text(st)}")
                held.close()
                kill_lock.release()
            threading.Thread(target=recorded_past).start()
        else:  # copytruncate to a name of its own, 25 ms between the copy and the truncation
            def copytruncate():
                first = shared["next"]
                shutil.copyfile(log, f"{log}-c{k:03}")
                time.sleep(0.025)
                os.truncate(log, 0)
                # The lines written meanwhile (a batch either side) may be in neither file.
                shared["windows"].append((first - BATCH, shared["next"] + BATCH))
                events.append(f"copytruncate {k}: lines {first - BATCH} to {shared['next'] + BATCH} may be in neither file")
            threading.Thread(target=copytruncate).start()
            shared["copytruncates"] += 1

    def on_batch(b):
        if b and b % (RATE // BATCH) == 0:
            # After a rotation: the inode at the name (and its birth, as the first line's number).
            events.append(f"  then line {b * BATCH + 1} on: a new file at the name" if not os.path.exists(log)
                          else f"  then line {b * BATCH + 1} on: inode {os.stat(log).st_ino} at the name")
        shared["next"] = b * BATCH + 1

    def kill_and_check(n):
        proc = shared["proc"]
        if proc.poll() is not None:
            shared["unexpected_exits"] += 1
            events.append(f"run {shared['runs']} had exited (status {proc.returncode}) before kill {n}")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        s = state_fields(st)
        if s is None or s[0] == 0:
            prefixes.append((n, 0, None, None))
            return
        with open(dest, "rb") as f:
            prefix = f.read(s[0])
        ok = None
        if gzip_out:
            ok = subprocess.run(["gzip", "-t"], input=prefix, stderr=subprocess.DEVNULL).returncode == 0
            if not ok:
                shutil.copyfile(dest, os.path.join(work, f"dest.at-kill-{n}"))
                shutil.copyfile(st, os.path.join(work, f"st.at-kill-{n}"))
        prefixes.append((n, s[0], hashlib.sha256(prefix).hexdigest(), ok))
        events.append(f"{time.monotonic() - begin:7.3f} s: kill {n} of run {shared['runs']}, state length {s[0]}, reading {s[1]}"
                      + ("" if ok is None else f", gzip -t of the prefix {'passed' if ok else 'FAILED'}"))

    moments = sorted(rng.uniform(0.2, seconds - 0.2) for _ in range(kills))
    downs = [rng.uniform(0, 0.6) for _ in range(kills)]
    begin = time.monotonic() + 0.3

    def killer():
        for n, (at, down) in enumerate(zip(moments, downs), 1):
            delay = begin + at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            with kill_lock:
                kill_and_check(n)
                time.sleep(down)
                start()

    start()
    time.sleep(0.3)
    killing = threading.Thread(target=killer)
    killing.start()
    total = writer(log, seconds, rotate=rotate, on_batch=on_batch)
    killing.join()
    # Epilogue: the live follower killed, the file appended to and deleted while none runs,
    # a new file at the name; the final run must report the loss (exit 2), and the lines
    # missing must be exactly those of the deleted file past the recorded checkpoint.
    time.sleep(1.5)
    with kill_lock:
        kill_and_check("epilogue")
    deleted = os.stat(log)
    append(log, lines(total + 1, 500))
    with open(log) as f:
        deleted_text = f.read()
    s = state_fields(st)
    offset = next((o for d, i, o in (s[1] if s else []) if (d, i) == (deleted.st_dev, deleted.st_ino)), 0)
    partial = offset and deleted_text[offset - 1] != "\n"
    # A line the checkpoint cuts is shipped in part; the lines after it are the ones lost.
    whole = deleted_text.index("\n", offset) + 1 if partial else offset
    expected_lost = {int(x) for x in deleted_text[whole:].split()}
    os.unlink(log)
    append(log, lines(total + 501, 500))
    total += 1000
    shared["runs"] += 1
    errname = os.path.join(work, f"stderr.{shared['runs']}")
    shared["errors"].append(errname)
    with open(errname, "w") as err:
        final = subprocess.run(command + ["--until-idle", "2s"], stderr=err)

    with open(dest, "rb") as f:
        raw = f.read()
    whole_ok = None
    if gzip_out:
        whole_ok = subprocess.run(["gzip", "-t"], input=raw, stderr=subprocess.DEVNULL).returncode == 0
        text = subprocess.run(["gzip", "-dc"], input=raw, capture_output=True).stdout.decode()
    else:
        text = raw.decode()
    got = [int(x) for x in text.split()]
    seen = set(got)
    missing = [n for n in range(1, total + 1) if n not in seen]
    result = judge(text, total)
    errors = ""
    for name in shared["errors"]:
        with open(name) as f:
            errors += f.read()
    loss_lines = [l for l in errors.splitlines() if "lost" in l or "cannot be counted" in l or "out of order" in l]
    in_window = lambda n: any(a <= n < b for a, b in shared["windows"])
    unexplained = [n for n in missing if n not in expected_lost and not in_window(n)]
    window_missing = [n for n in missing if n not in expected_lost and in_window(n)]
    truncation_reported = any("copied and truncated" in l or "truncated before" in l for l in loss_lines)
    epilogue_missing = [n for n in missing if n in expected_lost]
    # A line cut by the checkpoint's offset is shipped in part: its number may be read as another.
    prefixes_kept = sum(1 for _, length, digest, _ in prefixes if digest and hashlib.sha256(raw[:length]).hexdigest() == digest)
    with_state = sum(1 for p in prefixes if p[2])
    gz = [p[3] for p in prefixes if p[3] is not None]

    name = "crash-gzip" if gzip_out else "crash"
    print(f"{name}: seed {seed}, writer {seconds} s, {total - 1000} lines + 1,000 in the epilogue; rotations: {shared['renames']} rename-and-create, "
          f"{shared['shifts']} shifts, {shared['deletions']} delete-and-recreate (after a live follower held the file), "
          f"{shared['copytruncates']} copytruncates")
    print(f"  {kills} kills (SIGKILL) during the writer's run + 1 in the epilogue, {shared['runs']} runs of `{' '.join(['sluice'] + command[1:])}` "
          f"(paths in {work}); followers that had exited before their kill: {shared['unexpected_exits']}; "
          f"deletions skipped (the follower did not open the file in 10 s): {shared['open_timeouts']}; "
          f"waits for the state to pass a deleted file timed out (10 s): {shared['deletion_timeouts']}; then the final run with --until-idle 2s")
    print(f"  final run: exit {final.returncode}; DEST {len(raw)} bytes: {result}")
    print(f"  missing: {len(missing)}: {len(epilogue_missing)} of the {len(expected_lost)} lines of the file deleted while none ran "
          f"(past the checkpoint's offset {offset}{', within a line' if partial else ''}); {len(window_missing)} in copytruncate windows; "
          f"{len(unexplained)} unexplained" + (f" (first {unexplained[:10]})" if unexplained else ""))
    if unexplained:
        # Where the unexplained lines are: in a file still there (which), or in none.
        holders = {}
        for n in os.listdir(work):
            if n.startswith("app.log"):
                with open(os.path.join(work, n)) as f:
                    for x in f.read().split():
                        holders.setdefault(int(x), n)
        spans = []
        for n in unexplained:
            if spans and n == spans[-1][1] + 1 and holders.get(n) == spans[-1][2]:
                spans[-1][1] = n
            else:
                spans.append([n, n, holders.get(n)])
        print("  unexplained missing lines: " + ", ".join(f"{a}-{b} ({h or 'in no file now'})" for a, b, h in spans))
    print(f"  losses reported on stderr: {len(loss_lines)}" + "".join("\n    " + l for l in loss_lines))
    print(f"  durable prefixes: {with_state} kills found a state with a length > 0, {prefixes_kept} of them a prefix of the final DEST; "
          + (f"gzip -t of the prefix passed {sum(gz)} of {len(gz)}; gzip -t of the whole DEST: {'passed' if whole_ok else 'FAILED'}"
             if gzip_out else "(raw)"))
    deletion_ok = final.returncode == 2 and set(epilogue_missing) == expected_lost and any("gone when following resumed" in l for l in loss_lines)
    ok = (not unexplained and result["repeated"] == 0 and result["out_of_order"] == 0 and deletion_ok
          and (not window_missing or truncation_reported) and prefixes_kept == with_state
          and (not gzip_out or (all(gz) and whole_ok)))
    print(f"  {'OK' if ok else 'NOT OK'}: nothing missing but the deleted file's lines past the checkpoint (reported, exit 2)"
          f"{' and copytruncate windows (reported)' if window_missing else ''}, nothing repeated or out of order, every durable prefix kept"
          + (" and a valid gzip file" if gzip_out else ""))
    if ok:
        shutil.rmtree(work)
    else:
        with open(os.path.join(work, "events"), "w") as f:
            f.write("\n".join(events) + "\n")
        print(f"  kept for inspection: {work} (events: what happened when)")
    return ok


def log_backlog(path, size):
    """Log-like lines (a timestamp, a level, a component, a request with varying fields) to size bytes."""
    import random
    rng = random.Random(57)
    levels = ["INFO"] * 8 + ["DEBUG", "WARN"]
    parts = ["api", "db", "cache", "auth", "worker", "scheduler"]
    paths = ["/api/v1/items", "/api/v1/users", "/api/v2/orders", "/health", "/api/v1/search", "/static/app.js"]
    variants = [f"{rng.choice(levels)} [{rng.choice(parts)}-{rng.randrange(16)}] {rng.choice(['GET', 'POST', 'PUT'])} "
                f"{rng.choice(paths)}/{rng.randrange(100000)} status={rng.choice([200] * 9 + [404, 500])} "
                f"bytes={rng.randrange(100000)} duration_ms={rng.randrange(5000) / 10} "
                f"request_id={rng.getrandbits(64):016x}" for _ in range(4096)]
    written, n = 0, 0
    with open(path, "w") as f:
        while written < size:
            block = "".join(f"2026-12-07T{(n + i) // 3600000 % 24:02}:{(n + i) // 60000 % 60:02}:{(n + i) // 1000 % 60:02}."
                            f"{(n + i) % 1000:03}Z {variants[(n + i) * 2654435761 % 4096]}\n" for i in range(8192))
            n += 8192
            f.write(block[:size - written])
            written += min(len(block), size - written)


def catchup_state(sluice, runs):
    """The cost of exactly once: --state (durable) against cat and sync, -z against pigz and sync."""
    base = os.environ.get("TMPDIR", "/tmp")
    work = tempfile.mkdtemp(prefix="follow-catchup-state-", dir=base)
    fs = subprocess.run(["findmnt", "-n", "-o", "FSTYPE,SOURCE", "-T", work], capture_output=True, text=True).stdout.strip()
    big, dest, st = os.path.join(work, "app.log"), os.path.join(work, "dest"), os.path.join(work, "st")
    size = 1 << 30
    started = time.monotonic()
    log_backlog(big, size)
    subprocess.run(["sync"], check=True)
    subprocess.run(["cat", big], stdout=subprocess.DEVNULL, check=True)  # in the page cache, for both sides
    print(f"catchup-state: a 1 GiB log backlog ({size} bytes, generated in {time.monotonic() - started:.0f} s) in {work} ({fs}), "
          f"in the page cache (caches not dropped); DEST beside it; `sync` before every run, not timed")
    idle = 1.0

    def fresh():
        for p in (dest, st):
            if os.path.exists(p):
                os.unlink(p)
        subprocess.run(["sync"], check=True)

    def one_sluice(extra):
        # Until the state first records DEST's final length: all of it durable and recorded, the
        # exactly-once promise kept (the peer's time includes its sync). The durable point that
        # does it may fall in the idle second, so the time less that second is shown beside it.
        fresh()
        seen = []
        done = threading.Event()

        def watch():
            while not done.is_set():
                s = state_fields(st)
                if s and (not seen or seen[-1][1] != s[0]):
                    seen.append((time.monotonic(), s[0]))
                time.sleep(0.002)
        watcher = threading.Thread(target=watch)
        start = time.monotonic()
        watcher.start()
        subprocess.run([sluice, "follow", "--state", st, big, "-o", dest, "--until-idle", "1s"] + extra, check=True)
        end = time.monotonic()
        done.set()
        watcher.join()
        final = state_fields(st)[0]
        recorded = next((t for t, length in seen if length == final), end)
        less_idle.append(end - start - idle)
        return recorded - start

    def one_peer(argv, append_mode):
        fresh()
        start = time.monotonic()
        with open(big, "rb") as src, open(dest, "ab" if append_mode else "wb") as out:
            subprocess.run(argv, stdin=None if argv[0] == "cat" else src, stdout=out, check=True)
        subprocess.run(["sync"], check=True)
        return time.monotonic() - start

    results = []
    less_idle = []
    for label, extra, peer_name, peer in (
            ("sluice follow --state st FILE -o DEST --until-idle 1s", [], "cat FILE >> DEST; sync", lambda: one_peer(["cat", big], True)),
            ("sluice follow --state st FILE -o DEST --until-idle 1s -z -p 2", ["-z", "-p", "2"], "pigz -p 2 < FILE > DEST; sync",
             lambda: one_peer(["pigz", "-p", "2"], False))):
        times = {"sluice": [], "peer": []}
        less_idle.clear()
        for _ in range(runs):
            times["sluice"].append(one_sluice(extra))
            times["peer"].append(peer())
        s, p = statistics.median(times["sluice"]), statistics.median(times["peer"])
        print(f"  {label}, until the state records DEST's final length: " + " ".join(f"{t:.3f}" for t in times["sluice"])
              + f"; median {s:.3f} s (the command's time less the 1 s idle wait: median {statistics.median(less_idle):.3f} s)")
        print(f"  {peer_name}: " + " ".join(f"{t:.3f}" for t in times["peer"]) + f"; median {p:.3f} s")
        print(f"  ratio peer/sluice {p / s:.2f} (goal >= 0.9): {'met' if p / s >= 0.9 else 'NOT met'}; DEST {os.path.getsize(dest)} bytes")
        results.append(p / s)
    shutil.rmtree(work)
    return results


if __name__ == "__main__":
    sluice = sys.argv[1]
    what = sys.argv[2] if len(sys.argv) > 2 else "all"
    runs = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3].isdigit() else 20
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
    if what == "catchup-state":
        catchup_state(sluice, runs if len(sys.argv) > 3 and sys.argv[3].isdigit() else 5)
    if what in ("crash", "crash-gzip"):
        options = sys.argv[3:]
        seed = next((int(o) for o in options if o.isdigit()), None)
        ok = crash(sluice, what == "crash-gzip", seed=seed, copytruncates="--no-copytruncate" not in options)
        sys.exit(0 if ok else 1)
