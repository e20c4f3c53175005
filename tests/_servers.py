"""TCP servers on 127.0.0.1 that are no Dask scheduler (threads of the test process), for the
``--scheduler`` handshake tests: ``silent`` accepts and never answers, ``http`` answers like an HTTP
server, ``garbage`` sends bytes that are no Dask frame, ``huge-frame`` announces a frame it never sends."""

from __future__ import annotations

import socket
import threading

REPLIES = {
    "silent": b"",
    "http": b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
    "garbage": b"\xff" * 64,
    "huge-frame": (1).to_bytes(8, "little") + (10**6).to_bytes(8, "little"),
}


class NotDaskServers:
    """One listening server per behaviour in ``kinds``; :meth:`ports` maps each to its port."""

    def __init__(self, kinds=tuple(REPLIES)):
        self.listeners = {}
        for kind in kinds:
            listener = socket.socket()
            listener.bind(("127.0.0.1", 0))
            listener.listen(8)
            self.listeners[kind] = listener
            threading.Thread(target=self._serve, args=(listener, REPLIES[kind], kind == "http"), daemon=True).start()

    @staticmethod
    def _serve(listener, reply: bytes, read_first: bool):
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=NotDaskServers._handle, args=(conn, reply, read_first), daemon=True).start()

    @staticmethod
    def _handle(conn, reply: bytes, read_first: bool):
        with conn:
            try:
                if read_first:
                    conn.recv(4096)
                if reply:
                    conn.sendall(reply)
                while conn.recv(4096):
                    pass
            except OSError:
                pass

    def ports(self) -> dict:
        return {kind: str(listener.getsockname()[1]) for kind, listener in self.listeners.items()}

    def close(self) -> None:
        for listener in self.listeners.values():
            listener.close()
