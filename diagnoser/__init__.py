"""The diagnosis domain: reports, findings, tools, agents (later issues)."""
