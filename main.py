"""Launch the Engram desktop app."""

import sys

from desktop.ui.app import main

if __name__ == "__main__":
    sys.exit(main())
