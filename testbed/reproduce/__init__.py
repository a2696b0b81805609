"""`./run_trials.sh --reproduce SEED`: the seed papers' experiments, claim by claim.

run.py parses the options and writes the pages; base.py has the verdict words, options, claim,
page and runner; crosscheck.py the emulated bulk cross-checks; readme.py README's table; one
module per paper (seed000.py ... seed004.py; seed 002's matrix and emulated subset have
modules of their own). Pages run matrices through testbed/plan.py, never through the CLI.
"""
