"""Metrics: trial logs -> tidy pandas tables -> summary, plots, report."""
