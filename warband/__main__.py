"""``python -m warband`` is the ``warband`` command."""

from .cli import main

raise SystemExit(main())
