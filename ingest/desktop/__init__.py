"""Readers of desktop computer-use runs whose agent runs on any operating system (the loop's own logs)."""
