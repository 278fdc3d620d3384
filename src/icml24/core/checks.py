"""Up-front checks of what a command will write to and how it will run (paths, executors, seeds).

Each raises a one-line :class:`UserError` before anything is computed or written; none leaves a file.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from pathlib import Path

from icml24.core.errors import UserError

MAX_UNITS = 1000
"""Largest number of (paper, seed) units one command starts unless ``--max-units`` raises it."""
MAX_SEED = 2**32 - 1
"""Largest seed: numpy's and torch's generators take seeds below 2^32 without folding them."""


def writable_dir(path: Path, flag: str) -> Path:
    """``path`` can be a folder this process creates files in: it is a folder or can be made one.

    Probed by creating (and removing at once) a temporary folder in its nearest existing ancestor,
    so /proc, read-only mounts and plain files are caught without writing anything that stays.
    """
    path = Path(path)
    if _exists(path, flag) and not path.is_dir():
        raise UserError(f"{flag} {show(path)} is a file, not a folder")
    ancestor = path
    while not _exists(ancestor, flag):
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UserError(f"{flag} {show(path)}: {show(ancestor)} is a file, not a folder")
    try:
        probe = tempfile.mkdtemp(prefix=".icml24-probe-", dir=ancestor)
    except OSError as exc:
        raise UserError(f"{flag} {show(path)}: cannot write in {show(ancestor)} ({exc.strerror or exc})") from None
    shutil.rmtree(probe, ignore_errors=True)
    return path


def readable(path: Path, flag: str) -> bool:
    """Whether ``path`` (an input the user named: ``--results``, ``--from``) exists; one that exists but cannot
    be read, or lies below a folder that cannot be searched, is a :class:`UserError` naming ``flag``."""
    path = Path(path)
    if not _exists(path, flag):
        return False
    if not os.access(path, os.R_OK | (os.X_OK if path.is_dir() else 0)):
        raise UserError(f"{flag} {show(path)}: cannot be read (permission denied)")
    return True


def show(path: Path | str) -> str:
    """A path as one line: with a control character (a newline in a name) it is shown escaped, as repr does."""
    text = str(path)
    return text if text.isprintable() else repr(text)


def _exists(path: Path, flag: str) -> bool:
    """``path.exists()``, with a folder on the way that may not be searched (no permission) as a UserError."""
    try:
        path.stat()
    except FileNotFoundError:
        return False
    except NotADirectoryError:
        raise UserError(f"{flag} {show(path)}: a file stands where a folder of the path should be") from None
    except OSError as exc:
        raise UserError(f"{flag} {show(path)}: cannot be reached ({exc.strerror or exc})") from None
    return True


def executor_options(executor: str, workers: int | None, address: str | None) -> None:
    """``--workers`` is a positive count; ``--address`` belongs to Ray and must answer within 3 s as a gRPC server
    does (Ray's GCS): a plain HTTP server or a listener that says nothing is refused before Ray is asked."""
    if workers is not None and workers < 1:
        raise UserError(f"--workers {workers}: must be at least 1")
    if workers is not None and executor == "serial" and workers != 1:
        raise UserError("--workers needs --executor process or ray (serial runs one unit at a time)")
    if address is None:
        return
    if executor != "ray":
        raise UserError("--address is the Ray cluster address; it needs --executor ray")
    if address == "auto":
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")  # a Ray Client address is gRPC too
    if not sep or not port.isdigit():
        raise UserError(f"--address {address!r}: use host:port (e.g. 10.0.0.5:6379) or auto")
    try:
        conn = socket.create_connection((host or "127.0.0.1", int(port)), timeout=3)
    except OSError as exc:
        raise UserError(f"--address {address}: no Ray cluster answers there ({exc.strerror or exc})") from None
    with conn:
        if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
            return  # a TLS cluster waits for a ClientHello, not a plain HTTP/2 preface: the connection is all we check
        reply = _first_bytes(conn, _H2_PREFACE)
    if reply.startswith(b"HTTP/"):
        raise UserError(f"--address {address}: an HTTP server answers there, not a Ray cluster (Ray's GCS port, "
                        "default 6379)")
    if len(reply) < 4 or reply[3] != 0x04:  # gRPC's first frame is SETTINGS (type 4)
        what = "nothing answered within 3 s" if not reply else "what answers there does not speak gRPC"
        raise UserError(f"--address {address}: not a Ray cluster ({what}; Ray's GCS port, default 6379, "
                        "answers at once)")


_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
"""An HTTP/2 client preface and an empty SETTINGS frame: Ray's GCS (a gRPC server) answers with a SETTINGS
frame, an HTTP/1 server with an ``HTTP/1.x 400`` line, a listener that is neither with nothing."""


def _first_bytes(conn: socket.socket, payload: bytes, n: int = 9, timeout: float = 3.0) -> bytes:
    """Up to ``n`` bytes that ``conn`` answers to ``payload`` within ``timeout`` seconds (b"" if none)."""
    reply = b""
    deadline = time.monotonic() + timeout
    try:
        conn.sendall(payload)
        while len(reply) < n and (left := deadline - time.monotonic()) > 0:
            conn.settimeout(left)
            chunk = conn.recv(n - len(reply))
            if not chunk:
                break
            reply += chunk
    except OSError:  # a time-out or a reset: what came so far
        pass
    return reply


def seed_values(seeds: tuple[int, ...]) -> tuple[int, ...]:
    """Every seed in ``[0, MAX_SEED]``."""
    bad = [s for s in seeds if not 0 <= s <= MAX_SEED]
    if bad:
        raise UserError(f"seed {bad[0]} is out of range: seeds are integers from 0 to {MAX_SEED}")
    return seeds


def unit_count(n: int, limit: int) -> None:
    """A command may start at most ``limit`` units (``--max-units``), so a typo does not start 100,001."""
    if n > limit:
        raise UserError(f"this would start {n} seeds, more than --max-units {limit}; raise it to mean it")


def no_duplicate_keys(sets: list[str]) -> None:
    """Each config key is set at most once (``--set a=1 --set a=2`` is ambiguous)."""
    seen: set[str] = set()
    for item in sets:
        key = item.partition("=")[0].strip()
        if key in seen:
            raise UserError(f"--set {key} is given twice; keep one")
        seen.add(key)

