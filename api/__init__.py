"""HTTP service (later issues)."""
