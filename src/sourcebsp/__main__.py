"""``python -m sourcebsp``: the same as the ``sourcebsp`` command."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
