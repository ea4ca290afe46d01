"""Scripted agents, the loop that drives kernel -> simulator, and trace importers."""
