"""``python -m mathgraph.cli``: the ``mathgraph`` command."""

import sys

from mathgraph.cli.main import main

sys.exit(main())
