import sys

from ntkgap.cli import main

sys.exit(main())
