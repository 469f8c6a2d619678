import numpy as np
import pytest


def make_uncertain(n=120, d=4, seed=0, n_classes=2):
    """Gaussian classes with per-example diagonal variances (noisy, overlapping)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    centres = rng.normal(0, 1.5, (n_classes, d))
    X = centres[y] + rng.normal(0, 1.0, (n, d))
    V = rng.uniform(0.05, 0.8, (n, d))
    return X, y, V


@pytest.fixture
def data():
    return make_uncertain()


@pytest.fixture
def data3():
    return make_uncertain(n=150, d=5, seed=1, n_classes=3)
