"""`python -m trayburn`: runs the command line (`cli.main`) and exits with its code; nothing else."""

import sys

from .cli import main

sys.exit(main())
