"""``python -m superlinear`` and the ``superlinear`` command: the CLI (:mod:`superlinear.cli`),
loaded so that a Ctrl-C while it loads ends in one line and exit 130, as one later does."""

# _signal, not signal: signal.py imports enum, several milliseconds more of the window in which
# a Ctrl-C ends the start with a traceback.
import _signal
import sys

TYPE_CHECKING = False  # as in the package's __init__: no import of typing or types at the start
if TYPE_CHECKING:
    from types import FrameType


def main() -> int:
    # While the CLI loads, a Ctrl-C only sets a flag, read once it has loaded: a KeyboardInterrupt
    # raised inside the import machinery can land in a callback whose exceptions CPython ignores
    # ("Exception ignored in: ... _get_module_lock"), and the command then ran on as if no Ctrl-C
    # had come. Once loaded, until the CLI installs its own handler, one raises as usual.
    asked: list[int] = []

    def on_sigint(signum: int, frame: "FrameType | None") -> None:
        if loading:
            asked.append(signum)
        else:
            raise KeyboardInterrupt

    loading = True
    _signal.signal(_signal.SIGINT, on_sigint)
    from superlinear.cli import main as cli_main

    loading = False
    try:
        if asked:
            raise KeyboardInterrupt
        return cli_main()
    except KeyboardInterrupt:  # before the CLI's own handling began
        print("superlinear: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
