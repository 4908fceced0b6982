#!/usr/bin/env python3
"""Runs a command that reads a password from its terminal (su, passwd, sudo without -S) on a
pseudo-terminal and types PASSWORD at each password prompt, as a person would (for
debian_syslog.sh).
Usage: pty_login.py PASSWORD COMMAND [ARG...]   (exits with the command's status)"""
import os
import re
import pty
import select
import sys
import time


def main():
    password = sys.argv[1].encode() + b"\n"
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(sys.argv[2], sys.argv[2:])
    deadline = time.monotonic() + 15
    seen = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
        if re.search(rb"password( for \S+)?: ?$", seen.lower()):
            os.write(fd, password)
            seen = b""
    else:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
