"""Scripted agents: the workloads, the loop that drives kernel -> simulator, and their registry."""
