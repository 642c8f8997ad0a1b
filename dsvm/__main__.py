"""``python -m dsvm`` is the ``dsvm`` command."""

import sys

from dsvm.cli import main

sys.exit(main())
