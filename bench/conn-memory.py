#!/usr/bin/env python3
"""Memory per connection: opens N raw sockets to a running server and reports the
growth of its RSS per connection, for one kind of connection:

  idle  one `GET /json` answered, then the keep-alive connection stays open
  poll  a long-poll client waiting in `POST /push/poll?client=...`
  ws    a WebSocket client (upgraded, subscribed to nothing) that stays open

Usage: bench/conn-memory.py PORT PID[,PID...] [N] [idle|poll|ws]   (loopback only)
Several PIDs (nginx's workers) are summed.
"""
import base64
import json
import os
import re
import resource
import socket
import sys
import time


def rss_kib(pids):
    return sum(rss_kib_of(pid) for pid in pids)


def rss_kib_of(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def read_response(sock):
    """Reads one HTTP response with a Content-Length; returns (head, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    match = re.search(rb"(?i)content-length:\s*(\d+)", head)
    length = int(match.group(1)) if match else 0
    while len(body) < length:
        body += sock.recv(65536)
    return head, body


def open_one(port, kind):
    sock = socket.create_connection(("127.0.0.1", port))
    host = "Host: bench.localhost\r\n"
    if kind == "idle":
        sock.sendall(f"GET /json HTTP/1.1\r\n{host}\r\n".encode())
        read_response(sock)
    elif kind == "poll":
        sock.sendall(f"POST /push/poll HTTP/1.1\r\n{host}Content-Length: 0\r\n\r\n".encode())
        _, body = read_response(sock)
        hello = json.loads(body)
        client, token = hello["client"], hello["token"]
        sock.sendall(
            f"POST /push/poll?client={client} HTTP/1.1\r\n{host}X-Push-Token: {token}\r\n"
            "Content-Length: 0\r\n\r\n".encode()
        )
    elif kind == "ws":
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(
            (
                f"GET /push/ws HTTP/1.1\r\n{host}Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(4096)
    return sock


def main():
    port, pid = int(sys.argv[1]), [int(p) for p in sys.argv[2].split(",")]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    kind = sys.argv[4] if len(sys.argv) > 4 else "idle"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    before = rss_kib(pid)
    socks = [open_one(port, kind) for _ in range(n)]
    time.sleep(2)
    after = rss_kib(pid)
    print(
        f"{kind}: {n} connections, RSS {before // 1024} -> {after // 1024} MiB, "
        f"{(after - before) / n:.1f} KiB per connection"
    )
    for s in socks:
        s.close()


if __name__ == "__main__":
    main()
