"""scikit-learn's parameter protocol, shared by feature maps and estimators."""
import inspect


class Params:
    """`get_params` / `set_params` over the constructor's arguments, which subclasses store
    unchanged as attributes of the same names (scikit-learn's convention, so `clone` works)."""

    @classmethod
    def _param_names(cls):
        return sorted(p for p in inspect.signature(cls.__init__).parameters if p != "self")

    def get_params(self, deep=True):
        """The constructor arguments, as a dict."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set constructor arguments (fit again afterwards); returns self."""
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; "
                                 f"valid parameters: {', '.join(valid)}")
            setattr(self, name, value)
        return self
