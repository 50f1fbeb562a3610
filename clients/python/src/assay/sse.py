"""A server-sent events reader over a file-like byte stream (the WHATWG event-stream format)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO, Iterator


@dataclass(frozen=True)
class ServerSentEvent:
    event: str
    data: str


def read_events(stream: BinaryIO) -> Iterator[ServerSentEvent]:
    """Yields each event as it arrives; comments (heartbeats) are skipped. Ends with the stream."""
    event = ""
    data: list[str] = []
    while True:
        raw = stream.readline()
        if not raw:
            return
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data:
                yield ServerSentEvent(event or "message", "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
