"""A minimal HTTP/1.1 keep-alive GET client on asyncio streams, for latency benchmarks.

With 20 concurrent clients on a 2-core machine, a full-featured client (httpx) spends
more CPU per request than the server does, so the latency it reports is mostly the
load generator's own queueing. This client only writes a request line and reads the
status line, the headers and a ``Content-Length`` body, which costs a few microseconds;
what it measures is then the server's time to produce the complete response. It
understands exactly what a keep-alive JSON API sends (``Content-Length`` bodies) and
refuses anything else rather than mis-measuring it.
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit


class Connection:
    """One keep-alive connection to ``host:port``; requests on it are sequential."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 host: str, headers: dict[str, str] | None = None) -> None:
        self._reader = reader
        self._writer = writer
        self._host = host
        #: sent with every request (an X-Auth-Token)
        self._extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())

    @classmethod
    async def open(cls, url: str, headers: dict[str, str] | None = None) -> Connection:
        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        reader, writer = await asyncio.open_connection(host, port, limit=2**22)
        return cls(reader, writer, f"{host}:{port}", headers)

    async def get(self, url: str) -> tuple[int, bytes]:
        """GET ``url`` (absolute, same host) and return (status, body)."""
        parts = urlsplit(url)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        self._writer.write(f"GET {target} HTTP/1.1\r\nHost: {self._host}\r\n"
                           f"Accept: application/json\r\n{self._extra}\r\n".encode())
        return await self._response(url)

    async def request(self, method: str, url: str, body: bytes = b"",
                      headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        """Any method with a body and extra headers (signals); returns (status, body)."""
        parts = urlsplit(url)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self._writer.write(f"{method} {target} HTTP/1.1\r\nHost: {self._host}\r\n{extra}"
                           f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        return await self._response(url)

    #: the server answered HTTP/1.0 or ``Connection: close``: open a new connection
    closed = False

    async def _response(self, url: str) -> tuple[int, bytes]:
        head = await self._reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        self.closed = lines[0].startswith("HTTP/1.0")
        length: int | None = None
        for line in lines[1:]:
            name, _, value = line.partition(":")
            key = name.strip().lower()
            if key == "content-length":
                length = int(value.strip())
            elif key == "connection" and value.strip().lower() == "close":
                self.closed = True
            elif key == "transfer-encoding":
                raise RuntimeError(f"unsupported transfer-encoding from {url}: {value}")
        if length is None:
            raise RuntimeError(f"response from {url} has no Content-Length")
        body = await self._reader.readexactly(length)
        return status, body

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(ConnectionError):
            await self._writer.wait_closed()
