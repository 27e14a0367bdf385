#!/usr/bin/python3
"""A TCP source for make run's virtio-net raiser: every connection gets an
endless stream of zeros until the peer closes it.

usage: netsource.py PORT_FILE

Listens on an ephemeral port of 127.0.0.1, which a QEMU user-networking
guest reaches as 10.0.2.2, and writes the port number to PORT_FILE once it
accepts connections. The guest decides when the flood runs (it connects,
reads, closes), so the host needs no signal from it. Runs until killed.
"""

import socket
import sys
import threading

BUF = bytes(65536)


def serve(conn):
    try:
        while True:
            conn.sendall(BUF)
    except OSError:
        pass
    finally:
        conn.close()


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    with open(sys.argv[1], "w") as f:
        f.write(f"{srv.getsockname()[1]}\n")
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
