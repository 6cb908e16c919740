"""One module per ``dgtcast`` sub-command (layer L4), imported only when its command runs.

Each defines ``add_arguments(parser)`` and ``run(args) -> int`` (``daemon/cli.py``).
May import anything; nothing imports them but the command line and the tests.
"""

__all__: list[str] = []
