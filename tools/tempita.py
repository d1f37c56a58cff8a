"""Expand a Cython Tempita template at build time (the meson custom_targets of skylite/):

    python tempita.py FILE.tp -o OUTDIR [--part NAME=PART.tp ...]

writes OUTDIR/FILE.  Each --part is expanded first and its text is the template variable
NAME, so that code shared by several templates is written once (e.g. the block methods of
the feature maps, skylite/sketch/_block_methods.tp).
"""
import argparse
import os

from Cython import Tempita


def expand(path, namespace):
    """The text of the template at `path` with `namespace` substituted."""
    with open(path, encoding="utf-8") as f:
        return Tempita.Template(f.read(), name=path).substitute(namespace)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("template", help="a FILE.tp")
    parser.add_argument("-o", "--outdir", required=True, help="where FILE is written")
    parser.add_argument("--part", action="append", default=[], metavar="NAME=PART.tp",
                        help="a template whose expansion is the variable NAME")
    args = parser.parse_args()
    if not args.template.endswith(".tp"):
        parser.error(f"{args.template} is not a .tp template")
    namespace = {}
    for part in args.part:
        name, sep, path = part.partition("=")
        if not (sep and name.isidentifier() and path.endswith(".tp")):
            parser.error(f"--part takes NAME=PART.tp, got {part!r}")
        namespace[name] = expand(path, {}).strip("\n")
    target = os.path.join(args.outdir, os.path.basename(args.template)[:-len(".tp")])
    with open(target, "w", encoding="utf-8") as f:
        f.write(expand(args.template, namespace))


if __name__ == "__main__":
    main()
