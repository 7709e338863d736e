"""``python -m superlinear`` and the ``superlinear`` command: the CLI (:mod:`superlinear.cli`),
loaded so that a Ctrl-C while it loads ends in one line and exit 130, as one later does."""

import sys


def main() -> int:
    try:
        from superlinear.cli import main as cli_main
    except KeyboardInterrupt:  # nothing has started yet
        print("superlinear: interrupted", file=sys.stderr)
        return 130
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
