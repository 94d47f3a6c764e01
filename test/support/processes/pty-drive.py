#!/usr/bin/env python3
# Runs argv[1:] under a pseudo-terminal: our stdin goes to it as keystrokes, its screen comes out on
# our stdout; exits with its exit status. Used to drive the zkts shell as a user would.
import os, pty, select, sys

pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
stdin_open = True
while True:
    fds = [fd] + ([0] if stdin_open else [])
    r, _, _ = select.select(fds, [], [])
    if fd in r:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        os.write(1, data)
    if 0 in r:
        data = os.read(0, 4096)
        if not data:
            stdin_open = False
        else:
            os.write(fd, data)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8)
