"""Worker functions for the study tests. They live in a module (not a test file)
because spawned worker processes import them by name."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from manetlab.study.executor import Task, run_task

#: Marker directory for "crash only the first time" (set by the test).
MARKERS = "MANETLAB_TEST_MARKERS"


def flaky(task: Task) -> dict[str, Any]:
    """Seed 2 raises; seed 3 kills its worker the first time only; seed 4 kills it every time."""
    if task.seed == 2:
        raise_in_run = dict(vars(task))
        raise_in_run["scenario_json"] = task.scenario_json.replace('"duration_s"', '"duration_s_bogus"', 1)
        return run_task(Task(**raise_in_run))  # the core rejects it: a failed run, not a crash
    if task.seed == 3:
        marker = Path(os.environ[MARKERS]) / f"{task.scenario_hash}-{task.seed}"
        if not marker.exists():
            marker.touch()
            os._exit(3)
    if task.seed == 4:
        os._exit(4)
    return run_task(task)
