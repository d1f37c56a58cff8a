"""The parameters the feature maps share, documented once: `parameters` appends a numpydoc
Parameters section built from them to a map's docstring, so `help(GaussianRFF)` lists every
constructor argument."""
import inspect
import textwrap

_SHARED = {
    "n_features": ("int, default=1024",
                   "s, the number of features (columns of Z)."),
    "sigma": ("float > 0, default=1.0",
              "The kernel's bandwidth."),
    "nu": ("float > 0, default=1.5",
           "The smoothness (0.5: exp(-r / l); nu -> infinity: the Gaussian kernel with "
           "sigma = l)."),
    "length_scale": ("float > 0, default=1.0",
                     "l, the length scale."),
    "n_blocks": ("int, default=1",
                 "C, the number of column blocks (1 <= C <= s)."),
    "random_state": ("int, numpy Generator, RandomState or None, default=0",
                     "The seed; block j's random parameters depend on (seed, j) only.  None "
                     "draws a fresh seed, recorded in ``seed_``."),
    "sequence": ('{"monte_carlo", "sobol", "halton"}, default="monte_carlo"',
                 "Where the frequencies come from: i.i.d. draws (random phases "
                 "b ~ U[0, 2 pi)), or a scrambled Sobol' / leaped Halton sequence (cos / sin "
                 "pairs; quasi-Monte-Carlo)."),
}


def parameters(*entries):
    """Class decorator: append a Parameters section to the class docstring.

    Parameters
    ----------
    *entries : str or tuple of (str, str, str)
        The parameters in the signature's order: the name of one described in `_SHARED`,
        or (name, type, description) for a parameter of this class alone.

    Returns
    -------
    decorate : callable
        The decorator; it returns the class itself.
    """
    entries = [(entry, *_SHARED[entry]) if isinstance(entry, str) else entry
               for entry in entries]
    section = "\n".join(f"{name} : {kind}\n" + _indent(text) for name, kind, text in entries)

    def decorate(cls):
        cls.__doc__ = (inspect.cleandoc(cls.__doc__) + "\n\nParameters\n----------\n"
                       + section + "\n")
        return cls
    return decorate


def _indent(text, width=88):
    """text wrapped to `width` columns, indented by four spaces."""
    return textwrap.fill(text, width=width, initial_indent="    ", subsequent_indent="    ")
