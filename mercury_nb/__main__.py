"""Entry point for ``python -m mercury_nb``."""

import sys

from mercury_nb.cli import main

sys.exit(main())
