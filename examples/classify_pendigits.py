"""Train, watch, save and reload a kernel SVM on pendigits (shipped with skylite).

    python examples/classify_pendigits.py

Shows the scikit-learn style API: fit with a validation set scored every iteration
(`history_`), accuracy as the number of random features grows, and a save / load round trip.
"""
import os
import tempfile

import numpy as np

import skylite
from skylite import KernelSVC
from skylite.datasets import load_pendigits

X, y, X_test, y_test = load_pendigits()
X, X_test = X / 100.0, X_test / 100.0          # features are integers 0..100

print(f"{'features s':>10} {'test accuracy':>14} {'iterations':>10} {'seconds':>8}")
for s in (128, 512, 2048):
    model = KernelSVC(sigma=0.6, n_features=s, alpha=1e-5, random_state=0)
    model.fit(X, y, X_val=X_test, y_val=y_test)
    seconds = sum(record["seconds"] for record in model.history_)
    print(f"{s:>10} {100 * model.score(X_test, y_test):>13.2f}% {model.n_iter_:>10} "
          f"{seconds:>8.2f}")

best = max(model.history_, key=lambda record: record["validation"])
print(f"best validation accuracy {100 * best['validation']:.2f}% at iteration "
      f"{best['iteration']} of {model.n_iter_}")

with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "pendigits.sky")
    model.save(path)
    again = skylite.load(path)
    same = np.array_equal(again.predict(X_test), model.predict(X_test))
    print(f"saved {os.path.getsize(path)} bytes ({model.coef_.shape[0]} x "
          f"{model.coef_.shape[1]} weights + a JSON header); reloaded model predicts the same:"
          f" {same}")
