#!/usr/bin/env python3
"""A slow link for tests/net/check_network.sh: a TCP relay that passes bytes both ways unchanged,
each chunk held back by a delay and the stream throttled to a rate (tc netem is not available
on the test machines' kernels). Usage: relay.py LISTEN_PORT TARGET_HOST TARGET_PORT DELAY_S BYTES_PER_S
"""
import asyncio
import sys


async def pipe(reader, writer, delay, rate):
    try:
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                break
            await asyncio.sleep(delay + len(chunk) / rate)
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def main():
    listen_port, host, port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    delay, rate = float(sys.argv[4]), float(sys.argv[5])

    async def serve(client_reader, client_writer):
        upstream_reader, upstream_writer = await asyncio.open_connection(host, port)
        await asyncio.gather(pipe(client_reader, upstream_writer, delay, rate),
                             pipe(upstream_reader, client_writer, delay, rate))

    server = await asyncio.start_server(serve, "127.0.0.1", listen_port)
    print("relay ready", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
