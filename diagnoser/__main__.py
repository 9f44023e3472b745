"""`python -m diagnoser …` — the same as the `diagnoser` command."""

from __future__ import annotations

import sys

from diagnoser.cli import main

if __name__ == "__main__":
    sys.exit(main())
