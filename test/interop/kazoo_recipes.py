#!/usr/bin/python3
# kazoo (Debian python3-kazoo) Counter, Barrier, DoubleBarrier and SetPartitioner, driven by recipes-kazoo.test.ts
# on the same paths as zookeeper-ts's recipes. One line per fact on stdout; commands on stdin.
# Usage: kazoo_recipes.py <connectString> <recipe> <path> [args...]
#   counter <n> <text|curator>   n increments of 1 with Counter(+= 1)   -> DONE <value after the last one>
#   barrier-create               Barrier.create()                        -> DONE
#   barrier-remove               Barrier.remove()                        -> DONE <True|False>
#   barrier-wait                 wait(0.1) while up, then wait()         -> UP, then CLEARED
#   double <size> <id>           DoubleBarrier enter; stdin "leave"      -> ENTERED, LEFT
#   partition <id> <a,b,c>       SetPartitioner(time_boundary 0.2)       -> ALLOCATING <ns>, ACQUIRED <ns> <a,b|->, RELEASE <ns>
#                                (then ALLOCATING again), stdin "finish" -> FINISHED <ns>
#                                (<ns>: time.monotonic_ns(), CLOCK_MONOTONIC as Node's process.hrtime)
import sys
import threading
import time

from kazoo.client import KazooClient

hosts, recipe, path = sys.argv[1:4]
args = sys.argv[4:]
out = threading.Lock()


def emit(line):
    with out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


zk = KazooClient(hosts=hosts, timeout=10)
zk.start()
try:
    if recipe == "counter":
        counter = zk.Counter(path, support_curator=(args[1] == "curator"))
        for _ in range(int(args[0])):
            counter += 1
        emit("DONE %d" % counter.post_value)
    elif recipe == "barrier-create":
        zk.Barrier(path).create()
        emit("DONE")
    elif recipe == "barrier-remove":
        emit("DONE %s" % zk.Barrier(path).remove())
    elif recipe == "barrier-wait":
        barrier = zk.Barrier(path)
        if barrier.wait(0.1):
            emit("ERROR the barrier was down")
        else:
            emit("UP")
            emit("CLEARED" if barrier.wait(30) else "ERROR not cleared within 30 s")
    elif recipe == "double":
        barrier = zk.DoubleBarrier(path, int(args[0]), identifier=args[1])
        barrier.enter()
        emit("ENTERED")
        for line in sys.stdin:
            if line.strip() == "leave":
                barrier.leave()
                emit("LEFT")
                break
    elif recipe == "partition":
        changed = threading.Event()
        finish = threading.Event()

        def commands():
            for line in sys.stdin:
                if line.strip() == "finish":
                    break
            finish.set()
            changed.set()

        threading.Thread(target=commands, daemon=True).start()
        part = zk.SetPartitioner(path, set=args[1].split(","), identifier=args[0], time_boundary=0.2, state_change_event=changed)
        emit("ALLOCATING %d" % time.monotonic_ns())
        while not finish.is_set():
            changed.wait(30)
            changed.clear()
            if finish.is_set():
                break
            if part.failed:
                emit("ERROR failed")
                break
            if part.release:
                emit("RELEASE %d" % time.monotonic_ns())
                part.release_set()
                emit("ALLOCATING %d" % time.monotonic_ns())
            elif part.acquired:
                emit("ACQUIRED %d %s" % (time.monotonic_ns(), ",".join(sorted(part)) or "-"))
        if finish.is_set():
            emit("FINISHED %d" % time.monotonic_ns())
            part.finish()
    else:
        emit("ERROR unknown recipe %s" % recipe)
except Exception as e:  # noqa: BLE001 - the test reads it
    emit("ERROR %r" % e)
finally:
    zk.stop()
    zk.close()
