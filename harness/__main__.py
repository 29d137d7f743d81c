"""``python -m harness``: see harness/cli.py."""

from harness.cli import main

raise SystemExit(main())
