"""`repomap.collector`: the collector is off inside `loading()` and on again after it,
an exception included, with what the block made frozen; `before_exit` freezes what is
alive. In a fresh interpreter: the collector's state is the process's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN_DEADLINE_SECONDS = 60
"""A hang guard: the script ends in a fraction of a second."""
SCRIPT = """
import gc, json
from repomap import collector

seen = {}
with collector.loading():
    seen["inside"] = gc.isenabled()
    made = [[n] for n in range(5000)]  # containers the collector would track
seen["after"] = gc.isenabled()
seen["tracked_after_loading"] = sum(1 for o in gc.get_objects() if o is made)
try:
    with collector.loading():
        raise KeyError("an import failed")
except KeyError:
    pass
seen["after_a_failure"] = gc.isenabled()
gc.disable()
with collector.loading():
    pass
seen["left_off"] = not gc.isenabled()
gc.enable()
later = [[n] for n in range(5000)]
collector.before_exit()
seen["tracked_at_exit"] = len(gc.get_objects())
print(json.dumps(seen))
"""


def test_loading_pauses_the_collector_and_before_exit_leaves_it_nothing() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, check=True,
        timeout=RUN_DEADLINE_SECONDS,
    )  # fmt: skip
    seen = json.loads(done.stdout)
    assert seen["inside"] is False and seen["after"] is True
    assert seen["tracked_after_loading"] == 0  # frozen: no collection goes over it
    assert seen["after_a_failure"] is True
    assert seen["left_off"] is True  # a collector that was off stays off
    assert seen["tracked_at_exit"] < 100  # the 5,000 lists made later are frozen too
