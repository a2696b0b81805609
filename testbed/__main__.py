"""`python -m testbed`: the CLI of testbed/cli.py (what ./run_trials.sh runs)."""

import sys

from testbed.cli import main

sys.exit(main(sys.argv[1:]))
