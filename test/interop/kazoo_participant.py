#!/usr/bin/python3
# kazoo (Debian python3-kazoo, 2.8) Lock / Election participant for interop tests with zookeeper-ts.
# Usage: kazoo_participant.py <connectString> <path> <id> <sessionTimeoutMs> <lock|election|read|write|sem:PERMITS> [holdMs]
# (read/write: kazoo's ReadLock or WriteLock; sem: a Semaphore lease with max_leases PERMITS; HOLD's token is 0)
# Same line protocol as MutexParticipant.java (stamps: time.monotonic_ns() = CLOCK_MONOTONIC):
#   READY | HOLD <ns> <ms> <czxid> | FREE <ns> <ms> | ELECTED <ns> <ms> | REVOKED <ns> <ms>
#   STATE <state> <ns> <ms> | LEADER <id|-> | PARTICIPANTS a,b | SERVER <port|-> | CLOCK <ns> <ms>
#   LEASE <the lease znode's path while a semaphore lease is held | -> | SESSION <0x session id>
#   CLOSED | ERROR <text>.  stdin: close, leader?, participants?, server?, clock?, lease?, session? (EOF = close).
import os
import random
import sys
import threading
import time

from kazoo.client import KazooClient, KazooState

lock_out = threading.Lock()


def emit(line):
    with lock_out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def stamp(ns=None):
    return "%d %d" % (time.monotonic_ns() if ns is None else ns, int(time.time() * 1000))


hosts, path, ident, session_ms, mode = sys.argv[1:6]
hold_ms = int(sys.argv[6]) if len(sys.argv) > 6 else 30
state = {"connected": True, "epoch": 0}
changed = threading.Event()


def on_state(s):
    state["connected"] = s == KazooState.CONNECTED
    if s != KazooState.CONNECTED:
        state["epoch"] += 1
    changed.set()
    emit("STATE %s %s" % (s, stamp()))


client = KazooClient(hosts=hosts, timeout=int(session_ms) / 1000.0, connection_retry={"max_tries": -1, "delay": 0.1, "max_delay": 0.5})
client.add_listener(on_state)
client.start()
if mode == "read":
    lock = client.ReadLock(path, ident)
elif mode == "write":
    lock = client.WriteLock(path, ident)
elif mode.startswith("sem:"):
    lock = client.Semaphore(path, ident, max_leases=int(mode[4:]))
else:
    lock = client.Lock(path, ident)
election = client.Election(path, ident)


def hold_loop():
    while True:
        try:
            lock.acquire()
            epoch = state["epoch"]
            czxid = client.exists(path + "/" + lock.node).czxid if mode == "lock" else 0
            last = time.monotonic_ns()
            if state["connected"] and epoch == state["epoch"]:
                emit("HOLD %s %d" % (stamp(last), czxid))
                end = last + hold_ms * 1_000_000
                while state["connected"] and epoch == state["epoch"] and time.monotonic_ns() < end:
                    last = time.monotonic_ns()
                    time.sleep(0.002)
                emit("FREE %s" % stamp(last))
            lock.release()
            time.sleep(random.random() * 0.005)
        except Exception as e:  # a lost connection: kazoo retries on the next acquire
            emit("ERROR %s" % type(e).__name__)
            time.sleep(0.1)


def lead():
    emit("ELECTED %s" % stamp())
    while state["connected"]:
        changed.wait(0.05)
        changed.clear()
    emit("REVOKED %s" % stamp())


def election_loop():
    while True:
        try:
            election.run(lead)
        except Exception as e:
            emit("ERROR %s" % type(e).__name__)
            time.sleep(0.1)


threading.Thread(target=election_loop if mode == "election" else hold_loop, daemon=True).start()
emit("READY")
for raw in sys.stdin:
    cmd = raw.strip()
    if cmd == "close":
        break
    try:
        if cmd == "leader?":
            c = election.contenders()
            emit("LEADER %s" % (c[0] if c and c[0] else "-"))
        elif cmd == "participants?":
            emit("PARTICIPANTS %s" % ",".join(election.contenders()))
        elif cmd == "server?":
            try:
                emit("SERVER %d" % client._connection._socket.getpeername()[1])
            except Exception:
                emit("SERVER -")
        elif cmd == "clock?":
            emit("CLOCK %s" % stamp())
        elif cmd == "lease?":
            emit("LEASE %s" % (lock.create_path if mode.startswith("sem:") and lock.is_acquired else "-"))
        elif cmd == "session?":
            emit("SESSION 0x%x" % client.client_id[0])
        elif cmd:
            emit("ERROR unknown command %s" % cmd)
    except Exception as e:
        emit("ERROR %s: %s" % (type(e).__name__, e))
try:
    client.stop()
    client.close()
except Exception:
    pass
emit("CLOSED")
os._exit(0)
