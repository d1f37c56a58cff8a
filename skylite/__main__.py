"""The `skylite` command line (`python -m skylite`)."""
import sys


def main(argv=None):
    from .cli import main as cli_main
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
