"""Python's cyclic garbage collector, set for a command's process (the CLIs' entry points).

Two of its habits cost a short command a quarter of its wall time (docs/benchmarks.md,
"CLI start"):

- **While the modules load** it runs some 300 times over objects that all stay: the
  classes, schemas and tables PydanticAI, pydantic and ours make at import, 0.1 s of a
  `diagnoser diagnose`. `loading()` turns it off for the imports, then moves what they
  made to the permanent generation (`gc.freeze`), which later collections pass over: the
  service's too. The garbage the imports leave (~3,300 objects in a diagnosis's) stays
  with them.
- **At exit** the interpreter collects everything still alive, more than once, while it
  tears down the modules: 0.3–0.4 s after a diagnosis. `before_exit()` freezes what is
  alive so those collections pass over it; the process's memory goes back to the system
  with the process. Only the finalizers of objects in reference cycles are then not run
  at exit, which Python never promised (the data model, `object.__del__`); objects
  freed by their reference count, an open file among them, still are.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def loading() -> Iterator[None]:
    """The collector off while the block imports, then what is alive frozen; it is on
    again afterwards (if it was before), whatever the block raised."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def before_exit() -> None:
    """Call as the command ends: the interpreter's collections at exit skip what is alive."""
    gc.freeze()
