"""``python -m superlinear`` is the same as the ``superlinear`` command."""

import sys

from superlinear.cli import main

sys.exit(main())
