"""``python -m sourcebsp``: the same as the ``sourcebsp`` command."""
from .cli import console_main

if __name__ == "__main__":
    console_main()
