"""Progress lines for a log: quiet while the job is quick, then each line written at once."""

from __future__ import annotations

import io

from hvpa.commands.log_progress import QUIET_SECONDS, LogProgress


def test_quiet_for_the_first_seconds_then_the_time_spent() -> None:
    now = [0.0]
    log = io.StringIO()
    progress = LogProgress(log, wall=lambda: now[0])
    now[0] = QUIET_SECONDS - 0.5
    assert progress.spent() is None
    now[0] = QUIET_SECONDS
    assert progress.spent() == QUIET_SECONDS
    progress.write("still going")
    assert log.getvalue() == "still going\n"
