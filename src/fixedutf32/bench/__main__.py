"""``python -m fixedutf32.bench``: the same as ``fixedutf32 bench``."""

import sys

from . import main

sys.exit(main())
