"""Free TCP ports for servers started by tests."""

from __future__ import annotations

import socket

import psutil


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now (the kernel's pick, so parallel workers differ)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def listens_on(pid: int, port: int) -> bool:
    """Whether process ``pid`` (or a process it started) is the one listening on ``port``.

    A port from ``free_port`` is free only when chosen: until the server binds it, any
    process's bind(0) can be handed it too, so an answer on the port alone could come from
    another server that took it."""
    try:
        parent = psutil.Process(pid)
        family = [parent, *parent.children(recursive=True)]
        return any(c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port
                   for p in family for c in p.net_connections(kind="tcp"))
    except psutil.Error:
        return False
