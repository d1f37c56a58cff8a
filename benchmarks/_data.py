"""Where the benchmarks find their data: skylite's data folder ($SKYLITE_DATA, else
~/skylite_data; skylite.datasets.get_data_home).  MNIST is fetched and cached there on first
use (skylite.datasets.load_mnist); letter.npz and the Reuters files, when a benchmark needs
them, are read from there as they are."""
from skylite.datasets import get_data_home, load_mnist

DATA = get_data_home()


def mnist_file():
    """The path of mnist.npz in the data folder (X_train, y_train, X_test, y_test; pixels in
    [0, 1]), fetched there first if it is missing: for scripts whose child processes read
    the file themselves."""
    path = DATA / "mnist.npz"
    if not path.exists():
        load_mnist(data_home=DATA)
    return path


def require(*names):
    """Stop with a clear message unless every file `names` is in the data folder."""
    missing = [name for name in names if not (DATA / name).exists()]
    if missing:
        raise SystemExit(f"this benchmark reads {', '.join(missing)} from {DATA} (set "
                         f"SKYLITE_DATA to the folder that holds them)")
