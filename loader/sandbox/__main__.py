"""`python -m loader.sandbox serve ...`: the sandbox without the rest of the command line."""

import sys

from loader.commands.sandbox import main

sys.exit(main())
