"""Type stubs of the compiled extension ``usvm._usvm`` (crates/usvm-py). Use :mod:`usvm` instead."""

from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt
import scipy.sparse

__all__ = ["__version__", "fit_linear", "objective", "fit_platt", "stratified_split", "stratified_k_fold", "fit_kernel_igsu", "kernel_decision_function"]

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
    # Relative duality gap, None where the solver gives no dual bound (fit_linear only; Σ = 0 hinge).
    duality_gap: list[float | None]

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
def fit_kernel_igsu(
    x: object,
    y: np.ndarray,
    *,
    cov: object = None,
    sample_weight: np.ndarray | None = None,
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
    lam: float = 0.01,
    fit_intercept: bool = True,
    solver: str = "exact",
    approximation: str = "exact",
    n_components: int = 500,
    tol: float = 1e-6,
    max_iter: int = 1000,
    iterations: int = 1000,
    batch: int = 100,
    seed: int = 0,
) -> dict[str, object]: ...
def model_decision_function(model: str, x: object) -> np.ndarray: ...
def fit_sqhinge(
    x: _Means,
    y: npt.NDArray[np.int64],
    *,
    cov: _Cov = None,
    sample_weight: _Floats | None = None,
    loss: str = "expected",
    lam: float = 0.01,
    fit_intercept: bool = True,
    solver: str = "lbfgs",
    tol: float = 1e-6,
    max_iter: int = 1000,
    memory: int = 10,
    iterations: int = 1000,
    batch: int = 100,
    seed: int = 0,
) -> _FitResult:
    """Fits ``usvm::svm::SquaredHingeGsuParams`` (thesis ch. 5; ``loss`` "expected" or "thesis", ``solver``
    "lbfgs", "newton" or "sgd"; GIL released). Same result keys as ``fit_linear`` (no ``sigma_floor``, no
    ``duality_gap``)."""
# uncertainty modelling (crates/usvm-py/src/uncertainty.rs; wrapped by usvm._uncertainty)
def repeats_to_gaussians(
    groups: list[npt.NDArray[np.float64]], form: str
) -> tuple[npt.NDArray[np.float64], Any]:
    """Means and unbiased covariances (full / diag / iso / list of low-rank factors) of each group."""

def translation_factors(
    images: npt.NDArray[np.float64], height: int, width: int, sigma_h: float, sigma_v: float
) -> npt.NDArray[np.float64]:
    """``(ℓ, n, 2)`` factors ``[σ_h ∂f/∂x, σ_v ∂f/∂y]`` of the Taylor translation covariances."""

def welch_rows(
    x: npt.NDArray[np.float64], segment_len: int, overlap: int, window: str, fs: float, detrend: bool, ddof: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """``(freqs, means, variances)`` of the Welch segment periodograms of every row."""

def block_pool_map(
    map: npt.NDArray[np.float64], block_height: int, block_width: int, ddof: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Flattened per-block, per-channel means and variances of one ``(H, W, C)`` map."""

def se_to_variances(
    means: npt.NDArray[np.float64],
    se: npt.NDArray[np.float64],
    reference: npt.NDArray[np.int64] | None = None,
    fraction: float | None = None,
) -> npt.NDArray[np.float64]:
    """Variances from standard errors: squared (``fraction=None``) or the WDBC range rule."""
class BasisExpansionMap:
    """A fitted BE-SVM feature map (``usvm::besvm::BasisExpansion``)."""

    basis_indices: list[int]
    n_outputs: int
    def transform(self, x: _Floats | Any) -> npt.NDArray[np.float64]: ...

class BeSvm:
    """A fitted BE-SVM (``usvm::besvm::BeSvmModel``)."""

    n_parameters: int
    def decision_function(self, x: _Floats | Any) -> npt.NDArray[np.float64]: ...
    def expansion(self) -> BasisExpansionMap: ...
    def to_json(self, classes: list[int], hyperparameters: str = "{}") -> str: ...

def fit_basis_expansion(x: _Floats | Any, params: str) -> BasisExpansionMap:
    """Fits the map with ``params``, the JSON of ``usvm::besvm::BasisExpansionParams``."""

def fit_besvm(
    x: _Floats | Any, y: npt.NDArray[np.int64], params: str, *, sample_weight: _Floats | None = None
) -> tuple[BeSvm, dict[str, Any]]:
    """Fits BE-SVM with ``params`` (JSON of ``usvm::besvm::BeSvmParams``): ``(model, {coef, intercept,
    classes, objective, n_iter, converged, gradient_norm})``."""

def fit_squared_hinge(
    x: _Floats | Any,
    y: npt.NDArray[np.int64],
    *,
    c: float = 1.0,
    fit_intercept: bool = True,
    tol: float = 1e-10,
    max_iter: int = 1000,
    sample_weight: _Floats | None = None,
) -> dict[str, Any]:
    """``½‖w‖² + C Σ c_i max(0, 1 - y_i f(x_i))²`` (LIBLINEAR ``-s 2``; bias unregularised) by Newton;
    ``objective`` is ``J = P/(C n)``."""

def gamma_scale(x: _Floats | Any) -> float:
    """``1/(n_features · Var x)``."""
def render_boundary(
    means: npt.NDArray[np.float64],
    positive: list[bool],
    covs: npt.NDArray[np.float64] | None,
    lines: list[tuple[str, float, float, float]],
    sigmas: float,
    format: str,
    width: int,
    height: int,
    title: str | None = None,
) -> bytes:
    """``usvm_plot::BoundaryPlot``: means ``(n, 2)``, covariances ``(n, 2, 2)`` or None, lines
    ``(label, w1, w2, b)``; PNG or SVG bytes. Invalid figures raise ``ValueError``."""

def render_pr(
    curves: list[tuple[str, list[bool], list[float]]], format: str, width: int, height: int, title: str | None = None
) -> bytes:
    """``usvm_plot::PrPlot``: one precision-recall curve per ``(label, y_true, scores)``."""

def render_angle(
    series: list[tuple[str, list[float], list[float], list[float] | None, list[float] | None]],
    references: list[tuple[str, float, float]],
    format: str,
    width: int,
    height: int,
    title: str | None = None,
) -> bytes:
    """``usvm_plot::AnglePlot``: curves ``(label, n, angle, low, high)`` on a log-N axis, reference points
    ``(label, n, angle)``."""

def fit_svm_plus(
    x: _Floats | Any,
    y: npt.NDArray[np.int64],
    x_star: _Floats | Any,
    *,
    robust: bool = False,
    robust_lambda: float = 0.1,
    sigma_prime: float = 1.0,
    c: float = 1.0,
    rho: float = 1.0,
    kernel: str = "rbf",
    gamma: float | None = None,
    degree: int = 3,
    coef0: float = 0.0,
    gamma_star: float | None = None,
    tol: float = 1e-4,
    max_iter: int = 10_000_000,
) -> dict[str, Any]:
    """SVM+ / R-SVM+ (``robust=True``): ``support_vectors`` (dense), ``dual_coef``, ``intercept``,
    ``classes``, ``gamma``, ``gamma_star``, per machine ``objective`` (dual, maximised), ``n_iter``,
    ``converged``, ``max_violation``."""

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

# the method registry (crates/usvm-py/src/registry.rs; used by usvm._base)
METHODS: list[str]

class UsvmError(ValueError): ...
class ParamsError(UsvmError): ...
class InvalidParameterError(UsvmError): ...
class DataError(UsvmError): ...
class ModelFileError(UsvmError): ...

class _Report(TypedDict):
    objective: float
    n_iter: int
    termination: str  # "converged" | "max_iterations" | "stalled" | "not_certified"
    converged: bool
    gradient_norm: float
    duality_gap: float | None

class Model:
    """A fitted classifier of any registry method."""
    @property
    def classes(self) -> list[int]: ...
    @property
    def n_features(self) -> int: ...
    @property
    def method(self) -> str: ...
    @property
    def params(self) -> str: ...
    @property
    def linear(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None: ...
    def decision_function(self, x: _Means) -> npt.NDArray[np.float64]: ...
    def predict(self, x: _Means) -> npt.NDArray[np.int64]: ...
    def predict_proba(self, x: _Means) -> npt.NDArray[np.float64]: ...
    def with_platt(self, a: float, b: float) -> Model: ...
    def to_json(self) -> str: ...
    @staticmethod
    def from_json(text: str) -> Model: ...

def fit(
    params_json: str,
    x: _Means,
    y: npt.NDArray[np.int64],
    *,
    cov: _Cov = None,
    sample_weight: npt.NDArray[np.float64] | None = None,
    x_star: _Means | None = None,
    seed: int = 0,
    threads: int | None = None,
) -> tuple[Model, list[_Report]]: ...
def default_params(method: str) -> str: ...
