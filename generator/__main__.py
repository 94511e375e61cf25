"""``python -m soagen``: the ``soagen`` command line (:mod:`soagen.cli`)."""
import sys

from soagen.cli import main

sys.exit(main())
