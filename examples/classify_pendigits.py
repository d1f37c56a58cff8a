"""
Classify digits: train, save and reload a kernel SVM
====================================================

Train, watch, save and reload a kernel SVM on pendigits (shipped with skylite).
Run it with::

    python examples/classify_pendigits.py

Shows the scikit-learn style API: early stopping on a validation split of the training rows
(scored every iteration into ``history_``; the test set is only used for the final score),
accuracy as the number of random Fourier features grows (``method="rff"``; `KernelSVC`'s
default map is Nystroem features, ``method="auto"``), and a save / load round trip.
"""
import os
import tempfile

import matplotlib.pyplot as plt
import numpy as np

import skylite
from skylite import KernelSVC
from skylite.datasets import load_pendigits

X, y, X_test, y_test = load_pendigits()
X, X_test = X / 100.0, X_test / 100.0          # features are integers 0..100

print(f"{'features s':>10} {'test accuracy':>14} {'iterations':>10} {'seconds':>8}")
sizes, accuracies = (128, 512, 2048), []
for s in sizes:
    model = KernelSVC(sigma=0.6, method="rff", n_features=s, alpha=1e-5, random_state=0,
                      early_stopping=True, validation_fraction=0.1)
    model.fit(X, y)                 # 10% of the training rows (per class) held out
    seconds = sum(record["seconds"] for record in model.history_)
    accuracies.append(model.score(X_test, y_test))
    print(f"{s:>10} {100 * accuracies[-1]:>13.2f}% {model.n_iter_:>10} {seconds:>8.2f}")

best = model.history_[model.best_iteration_ - 1]
print(f"kept iteration {model.best_iteration_} of {model.n_iter_}: validation accuracy "
      f"{100 * best['validation']:.2f}% on {len(model.validation_indices_)} held-out "
      f"training rows")

with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "pendigits.sky")
    model.save(path)
    again = skylite.load(path)
    same = np.array_equal(again.predict(X_test), model.predict(X_test))
    print(f"saved {os.path.getsize(path)} bytes ({model.coef_.shape[0]} x "
          f"{model.coef_.shape[1]} weights + a JSON header); reloaded model predicts the same:"
          f" {same}")

# %%
# Test accuracy against the number of random features: it saturates long before the
# kernel approximation is exact (see the kernel approximation example).
fig, ax = plt.subplots(figsize=(5, 3), layout="constrained")
ax.semilogx(sizes, [100 * a for a in accuracies], "o-", base=2)
ax.set_xticks(sizes, [str(s) for s in sizes])
ax.set_xlabel("features s")
ax.set_ylabel("test accuracy (%)")
ax.set_title("KernelSVC on pendigits: accuracy against s")
ax.grid(True, alpha=0.3)
plt.show()
