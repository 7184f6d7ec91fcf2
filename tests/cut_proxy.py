"""A proxy in front of a test server that cuts one answer off after its headers, as a worker killed while it
writes the answer does: the browser has the status line and then a body that never ends."""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Callable


class CutProxy:
    """Forwards each connection to ``upstream`` (one request per connection); the first answer for which
    ``cut(path, answer_body)`` is true gets its headers and half its body, then the connection closes."""

    def __init__(self, upstream_port: int, cut: Callable[[str, bytes], bool]) -> None:
        self.cut = cut
        self.done = threading.Event()
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy._forward(self.request, upstream_port)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _forward(self, client: socket.socket, port: int) -> None:
        request = _read_message(client)
        if request is None:
            return
        head, body = request
        lines = head.split(b"\r\n")
        path = lines[0].split(b" ")[1].decode()
        kept = [ln for ln in lines[1:] if not ln.lower().startswith((b"connection:", b"keep-alive:"))]
        sent = b"\r\n".join([lines[0], *kept, b"Connection: close"]) + b"\r\n\r\n" + body
        with socket.create_connection(("127.0.0.1", port)) as up:
            up.sendall(sent)
            answer = b"".join(iter(lambda: up.recv(65536), b""))
        answer_head, _, answer_body = answer.partition(b"\r\n\r\n")
        if not self.done.is_set() and answer_body and self.cut(path, answer_body):
            self.done.set()
            client.sendall(answer_head + b"\r\n\r\n" + answer_body[: len(answer_body) // 2])
            client.shutdown(socket.SHUT_RDWR)  # the rest never comes
            return
        client.sendall(answer)


def _read_message(sock: socket.socket) -> tuple[bytes, bytes] | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head, body


__all__ = ("CutProxy",)
