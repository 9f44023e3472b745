"""Proof by execution (opt-in): a report's reproducer run in a sandboxed throwaway copy.

    attempt = reproduce(report, workspace)     # Attempt: a Reproduction, the run's traces

`reproducer` finds what to run, `runner` turns it into a command for a language (Python,
Node.js, JUnit on a JDK — whose launcher is `java/DiagnoserJUnit.java`),
`scratch` makes the throwaway copy, `sandbox` runs it under bubblewrap with limits,
`verdict` is the fail-closed base gate, `logs` keeps each run's output, `reproduce` puts
them together; `probes` are the explorer's own reproducers. After a reproduction:
`fusion` merges the run's ranking with the report's, `trial` runs a proposed change
against the reproducer and its `neighbours`' tests, `fixes` tries every change and the
repair `templates`, `revision` sends a failed change back to the model once.
"""

from diagnoser.verify.logs import Logs
from diagnoser.verify.reproduce import Attempt, reproduce

__all__ = ["Attempt", "Logs", "reproduce"]
