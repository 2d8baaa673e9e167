"""PyInstaller's entry point: the frozen app runs the same ``main()`` as the ``trayburn`` script."""

import sys

from trayburn.cli import main

if __name__ == "__main__":
    sys.exit(main())
