"""Where the benchmarks find their data: skylite's data folder ($SKYLITE_DATA, else
~/skylite_data; skylite.datasets.get_data_home).  MNIST is fetched and cached there on first
use (skylite.datasets.load_mnist); letter.npz and the Reuters files, when a benchmark needs
them, are read from there as they are."""
import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from skylite.datasets import get_data_home, load_mnist

DATA = get_data_home()

# the width of scikit-learn's HashingVectorizer
HASHED_WIDTH = 2**20


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


def reuters(width=None, name="reuters_lasvm.svm.gz"):
    """Reuters rows (CSR, float64; the training file by default, d = 8,315) and labels, at
    their own width or, for `width`, spread over that many columns (column j ->
    j * 2654435761 mod width, a fixed hash)."""
    X, y = load_svmlight_file(str(DATA / name), n_features=8315)
    X = sp.csr_matrix(X)
    if width is not None:
        columns = (np.arange(X.shape[1], dtype=np.int64) * 2654435761) % width
        X = sp.csr_matrix((X.data, columns[X.indices], X.indptr), shape=(X.shape[0], width))
        X.sort_indices()
    return X, y
