"""``python -m conformance``: the corpus against every implementation installed here."""

import sys

from .runner import main

if __name__ == "__main__":
    sys.exit(main())
