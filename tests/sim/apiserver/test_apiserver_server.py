"""The server's own stamps on every response."""

from __future__ import annotations

import email.utils

import aiohttp

from hvpa.sim.apiserver import ApiServer


async def test_the_date_header_follows_the_server_clock_to_the_second() -> None:
    """Date is the simulated cluster's time, read at each response (aiohttp would stamp the
    machine's), and follows the clock when it moves, back as well as on."""
    now = [1_700_000_000.0]
    async with (
        ApiServer(seed=7, clock=lambda: now[0]) as server,
        aiohttp.ClientSession() as session,
    ):
        # 0.9999996 s: formatdate rounds the microseconds up into the next second.
        for moment in (
            1_700_000_000.0,
            1_700_000_061.5,
            1_700_000_000.0,
            1_700_003_600.9999996,
        ):
            now[0] = moment
            async with session.get(server.url + "/version") as response:
                assert response.status == 200
                assert response.headers["Date"] == email.utils.formatdate(moment, usegmt=True)
