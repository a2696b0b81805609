"""Generic helpers that every folder may import (testbed/, server/, kernel-config/, metrics/,
player/, bench/): atomic JSON files, stopping a child process, the default path names.

common/ imports nothing of the project (tests/test_layers.py checks it), so importing it never
pulls in the orchestrator.
"""
