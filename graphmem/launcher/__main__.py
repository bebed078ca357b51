"""``python -m graphmem.launcher``: the launcher's command line (cli.py)."""

from graphmem.launcher.cli import main

raise SystemExit(main())
