"""Intake: whatever arrives (text, webhook payloads) → a normalized `Report`."""
