"""Kernel MPTCP mode: capability probe, per-trial MPTCP set-up, subflow statistics."""
