"""`python -m manetlab` is the `manetlab` command."""

import sys

from manetlab.cli import main

sys.exit(main())
