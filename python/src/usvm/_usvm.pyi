"""Type stubs of the compiled extension ``usvm._usvm`` (crates/usvm-py). Use :mod:`usvm` instead."""

from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt
import scipy.sparse

__all__ = ["__version__", "fit_linear", "objective", "fit_platt", "stratified_split", "stratified_k_fold"]

__version__: str

_Floats = npt.NDArray[np.float64] | npt.NDArray[np.float32]
_Means = _Floats | scipy.sparse.csr_matrix | scipy.sparse.csr_array
_Cov = _Floats | scipy.sparse.csr_matrix | scipy.sparse.csr_array | tuple[_Floats, _Floats | None] | None

class _FitResult(TypedDict):
    coef: npt.NDArray[np.float64]
    intercept: npt.NDArray[np.float64]
    classes: list[int]
    objective: list[float]
    n_iter: list[int]
    converged: list[bool]
    gradient_norm: list[float]
    initial_gradient_norm: list[float]
    sigma_floor: list[float]
    objective_trace: list[list[float]]

def fit_linear(
    x: _Means,
    y: npt.NDArray[np.int64],
    *,
    cov: _Cov = None,
    sample_weight: _Floats | None = None,
    method: str = "gsu",
    lam: float = 0.01,
    fit_intercept: bool = True,
    solver: str = "exact",
    tol: float = 1e-6,
    max_iter: int = 1000,
    iterations: int = 1000,
    batch: int = 100,
    samples: int = 10,
    seed: int = 0,
    radius_scale: float = 1.0,
    subspace_variance: float | None = None,
    max_rounds: int = 100,
    start: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None = None,
) -> _FitResult:
    """Fits ``usvm::LinearSvmParams`` (GIL released), warm-started from ``start = (coef, intercept)`` if
    given. Raises ValueError with the core's message on bad data or settings, TypeError on arrays of an
    unsupported dtype."""

def objective(
    x: _Means,
    y: npt.NDArray[np.float64],
    coef: npt.NDArray[np.float64],
    intercept: float,
    *,
    cov: _Cov = None,
    sample_weight: _Floats | None = None,
    lam: float = 0.01,
    fit_intercept: bool = True,
) -> float:
    """``λ/2‖w‖² + (1/ℓ) Σ c_i L(d_i, σ_i)`` (expected hinge; hinge where σ_i = 0), labels ±1."""

def fit_platt(
    scores: npt.NDArray[np.float64], positive: npt.NDArray[np.bool_]
) -> tuple[float, float, int, bool]:
    """LIBSVM's sigmoid_train: ``(a, b, n_iter, converged)`` of ``P(y=1|f) = 1/(1 + exp(a f + b))``."""

def stratified_split(
    labels: npt.NDArray[np.int64], test_fraction: float, seed: int = 0
) -> tuple[npt.NDArray[np.uintp], npt.NDArray[np.uintp]]:
    """``usvm::model_selection::stratified_split``: seeded stratified ``(train, test)`` indices (sorted),
    ``round(test_fraction · n_c)`` test examples of each class ``c``."""

def stratified_k_fold(labels: npt.NDArray[np.int64], k: int, seed: int = 0) -> list[npt.NDArray[np.uintp]]:
    """``usvm::model_selection::stratified_k_fold``: ``k`` seeded stratified test folds (each sorted) that
    partition the examples: the folds of the core's cross-validation."""

def fit_kernel_svm(
    x: _Floats | Any,
    y: npt.NDArray[np.int64],
    *,
    sample_weight: _Floats | None = None,
    kernel: str = "rbf",
    gamma: float = 1.0,
    degree: int = 3,
    coef0: float = 0.0,
    c: float = 1.0,
    tol: float = 1e-3,
    cache_mb: float = 200.0,
    max_iter: int = 0,
    shrinking: bool = True,
) -> dict[str, Any]:
    """Kernel SVM by SMO (per-example costs ``c·sample_weight_i``; one-vs-rest): ``support``, ``dual_coef``,
    ``intercept``, ``classes``, per machine ``objective``, ``n_iter``, ``converged``, ``max_violation``,
    ``n_support``, ``n_bounded``. A precomputed kernel takes LIBSVM's layout (serial number in column 0)."""

def kernel_decision_function(
    x: _Floats | Any,
    support_vectors: _Floats | Any,
    dual_coef: npt.NDArray[np.float64],
    intercept: npt.NDArray[np.float64],
    *,
    kernel: str = "rbf",
    gamma: float = 1.0,
    degree: int = 3,
    coef0: float = 0.0,
) -> npt.NDArray[np.float64]:
    """``f_k(x) = Σ_j dual_coef[k, j] k(x, s_j) + intercept[k]``, shape (n, K)."""

def fit_tsvc(
    x: _Floats | Any,
    y: npt.NDArray[np.int64],
    *,
    delta: list[float],
    sample_weight: _Floats | None = None,
    kernel: str = "linear",
    gamma: float = 1.0,
    degree: int = 3,
    coef0: float = 0.0,
    c: float = 1.0,
    form: str = "alternating",
    norm_bound: float | None = None,
    max_rounds: int = 100,
    tol: float = 1e-6,
    fit_intercept: bool = True,
) -> dict[str, Any]:
    """TSVC (Bi & Zhang): ``delta`` one bound or one per example; linear ``coef``/``intercept`` or kernel
    ``support_vectors`` (shifted points)/``dual_coef``/``intercept``; ``classes``; per binary problem
    ``objective``, ``objective_trace``, ``rounds``, ``n_iter``, ``converged``, ``gamma``, ``duality_gap``."""
