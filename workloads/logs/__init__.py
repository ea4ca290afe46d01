"""Real and recorded logs: safe reading, JSON lines, the normalized trace, the log formats, replay."""
