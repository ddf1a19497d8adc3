#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A server that accepts connections and reads requests but never answers (a service that hangs), for the tests of
--timeout. Usage: silent_server.py --port 0; prints "PORT <n>" first."""
import argparse, socket, threading

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, default=0)
opts = parser.parse_args()
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", opts.port))
listener.listen(64)
print(f"PORT {listener.getsockname()[1]}", flush=True)
held = []

def hold(connection):
    try:
        while connection.recv(65536):
            pass
    except OSError:
        pass

while True:
    connection, _ = listener.accept()
    held.append(connection)
    threading.Thread(target=hold, args=(connection,), daemon=True).start()
