"""A byte relay between a TCP port and a Unix socket, in either direction.

    python -m testbed.relay --listen-unix PATH --connect-tcp HOST:PORT   (in a namespace)
    python -m testbed.relay --listen-tcp HOST:PORT --connect-unix PATH   (on the host)

Interactive mode (testbed/interactive.py) runs one in the trial's client namespace and one on
the host: a Unix socket is a file, reachable from every network namespace, so the pair forwards
the host's loopback port to the server endpoint as the client namespace sees it (through the
emulated paths and the transport) without a route between the namespaces. Runs until killed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys

CHUNK = 64 * 1024


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


def _host_port(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: expected HOST:PORT, e.g. 127.0.0.1:8088")
    return host, int(port)


async def serve(args: argparse.Namespace) -> None:
    async def connect() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if args.connect_unix:
            return await asyncio.open_unix_connection(args.connect_unix)
        return await asyncio.open_connection(*args.connect_tcp)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await connect()
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    if args.listen_unix:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(args.listen_unix)
        server = await asyncio.start_unix_server(handle, args.listen_unix)
    else:
        server = await asyncio.start_server(handle, *args.listen_tcp, reuse_address=True)
    where = args.listen_unix or "{}:{}".format(*args.listen_tcp)
    print("relay: listening on", where, flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    listen = parser.add_mutually_exclusive_group(required=True)
    listen.add_argument("--listen-unix")
    listen.add_argument("--listen-tcp", type=_host_port)
    to = parser.add_mutually_exclusive_group(required=True)
    to.add_argument("--connect-unix")
    to.add_argument("--connect-tcp", type=_host_port)
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
