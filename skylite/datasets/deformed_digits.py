"""Deformed digits: an unbounded stream of training rows made from a set of digit images, in
the style of infinite MNIST (Loosli, Canu & Bottou 2007; the paper's mnist8m).

Row k of the stream is a pure function of (seed, k): a base image drawn from the given
images, moved by a small random affine map (rotation, scale, shear, shift) and by a smooth
random elastic displacement field (Simard, Steinkraus & Platt 2003: uniform noise smoothed by
a Gaussian filter, scaled), resampled with bilinear interpolation.  Its random numbers come
from a generator seeded by (seed, k) alone, so any range of rows can be produced
independently (by chunks, processes or MPI ranks) and row k is the same in every one.

The deformation sizes are fixed a priori (not tuned on any test data):

    rotation  uniform in [-12, 12] degrees       scale   uniform in [0.9, 1.1] per axis
    shear     uniform in [-0.15, 0.15]           shift   uniform in [-2, 2] pixels per axis
    elastic   displacement = 12 * gaussian_filter(uniform(-1, 1), sigma=4) per axis, pixels
"""
import numpy as np
from scipy.ndimage import gaussian_filter, map_coordinates

__all__ = ["deformed_digits"]

ROTATION_DEGREES = 12.0
SCALE = 0.1
SHEAR = 0.15
SHIFT = 2.0
ELASTIC_ALPHA = 12.0
ELASTIC_SIGMA = 4.0


def deformed_digits(images, labels, seed, start, stop, *, shape=(28, 28)):
    """Rows start..stop-1 of the deformed stream of `images` (module docstring).

    Row k of the result depends only on (images, labels, seed, k).

    Parameters
    ----------
    images : array-like of shape (N, h*w)
        Base images with values in [0, 1] (row-major h x w).
    labels : array-like of shape (N,)
        Labels of the base images.
    seed : int >= 0
        The seed of the stream.
    start, stop : int
        Row numbers, 0 <= start <= stop.
    shape : tuple of (int, int), default=(28, 28)
        (h, w) of one image.

    Returns
    -------
    X : ndarray of shape (stop - start, h*w), float32
        The deformed images, values in [0, 1].
    y : ndarray of shape (stop - start,)
        Their labels.
    """
    images = np.asarray(images)
    labels = np.asarray(labels)
    h, w = (int(v) for v in shape)
    if images.ndim != 2 or images.shape[1] != h * w:
        raise ValueError(f"images must have shape (N, {h * w}) for shape={shape}, "
                         f"got {images.shape}")
    if len(labels) != len(images) or len(images) == 0:
        raise ValueError(f"need as many labels as images (>= 1), got {len(labels)} labels "
                         f"for {len(images)} images")
    if not (isinstance(seed, (int, np.integer)) and seed >= 0):
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if not 0 <= start <= stop:
        raise ValueError(f"need 0 <= start <= stop, got start={start}, stop={stop}")
    rows = stop - start
    base = np.empty(rows, dtype=np.intp)
    affine = np.empty((rows, 2, 2))
    shift = np.empty((rows, 2))
    noise = np.empty((rows, 2, h, w))
    for r, k in enumerate(range(start, stop)):
        rng = np.random.default_rng([int(seed), k])
        base[r] = rng.integers(len(images))
        angle, shear = np.deg2rad(rng.uniform(-ROTATION_DEGREES, ROTATION_DEGREES)), \
            rng.uniform(-SHEAR, SHEAR)
        scale = rng.uniform(1 - SCALE, 1 + SCALE, size=2)
        rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        affine[r] = rotation @ np.array([[1.0, shear], [0.0, 1.0]]) @ np.diag(scale)
        shift[r] = rng.uniform(-SHIFT, SHIFT, size=2)
        noise[r] = rng.uniform(-1.0, 1.0, size=(2, h, w))
    # the smoothing acts on each row's own field (sigma 0 across rows and components)
    displacement = ELASTIC_ALPHA * gaussian_filter(noise, sigma=(0, 0, ELASTIC_SIGMA,
                                                                 ELASTIC_SIGMA), mode="constant")
    centre = np.array([(h - 1) / 2.0, (w - 1) / 2.0])
    grid = np.stack(np.meshgrid(np.arange(h), np.arange(w), indexing="ij")) - centre[:, None, None]
    # source coordinates of every output pixel: A (p - c) + c + shift + displacement
    source = (np.einsum("rab,bij->raij", affine, grid) + centre[None, :, None, None]
              + shift[:, :, None, None] + displacement)
    stack = images[base].reshape(rows, h, w).astype(np.float64)
    index = np.broadcast_to(np.arange(rows, dtype=np.float64)[:, None, None], (rows, h, w))
    X = map_coordinates(stack, [index, source[:, 0], source[:, 1]], order=1, mode="constant",
                        cval=0.0)
    return np.clip(X, 0.0, 1.0).reshape(rows, h * w).astype(np.float32), labels[base]
