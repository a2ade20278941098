"""Reliability-24, processes and signals (issue 26): the relay of the pool workers' output, real kills, closed and
full standard streams."""

from __future__ import annotations

import fcntl
import os
import threading

from storagelab.store.workerio import Relay


def test_the_relay_copies_every_byte_of_a_chunk_to_a_non_blocking_stderr_with_less_room_than_the_chunk():
    # reliability-23's medium: the relay thread wrote each chunk of the workers' lines with one os.write; to a
    # stderr made non-blocking by another program sharing it (a pipe of 4 KiB), 4,096 of the 65,536 bytes arrived
    # (a short write) or none (EAGAIN), without a word
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
    os.set_blocking(w, False)
    got = bytearray()

    def drain() -> None:
        while data := os.read(r, 1 << 16):
            got.extend(data)

    relay = Relay(w)
    lines = b"".join(b"worker line %05d of the parser pool\n" % i for i in range(1700))  # 62,900 bytes
    assert relay.fd is not None
    os.write(relay.fd, lines)  # the relay's own pipe holds 64 KiB: one chunk for the thread
    reader = threading.Thread(target=drain, daemon=True)
    try:
        reader.start()
        relay.close()
    finally:
        os.close(w)
        reader.join(2)
        os.close(r)
    assert len(got) == 62_900
    assert bytes(got) == lines
