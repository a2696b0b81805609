"""Testbed orchestrator: topology, trial lifecycle, process supervision, CLI."""
