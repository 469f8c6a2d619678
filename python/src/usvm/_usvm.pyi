"""Type stubs of the compiled extension ``usvm._usvm`` (crates/usvm-py). Use :mod:`usvm` instead."""

from typing import Any, Callable, TypedDict

import numpy as np
import numpy.typing as npt
import scipy.sparse

__all__ = ["__version__", "fit", "Model", "default_params", "METHODS", "objective", "fit_platt", "stratified_split", "stratified_k_fold"]

__version__: str

_Floats = npt.NDArray[np.float64] | npt.NDArray[np.float32]
_Means = _Floats | scipy.sparse.csr_matrix | scipy.sparse.csr_array
_Cov = _Floats | scipy.sparse.csr_matrix | scipy.sparse.csr_array | tuple[_Floats, _Floats | None] | None

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

def fit_basis_expansion(x: _Floats | Any, params: str) -> BasisExpansionMap:
    """Fits the map with ``params``, the JSON of ``usvm::besvm::BasisExpansionParams``."""

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

class UsvmError(ValueError): ...
class ParamsError(UsvmError): ...
class InvalidParameterError(UsvmError): ...
class DataError(UsvmError): ...
class ModelFileError(UsvmError): ...

class _Fallback(TypedDict):
    taken: str  # "relaxation" | "alternating"
    relaxation_objective: float
    alternating_objective: float

class _Report(TypedDict):
    objective: float
    n_iter: int
    termination: str  # "converged" | "max_iterations" | "stalled" | "not_certified"
    converged: bool
    gradient_norm: float
    initial_gradient_norm: float
    duality_gap: float | None
    objective_trace: list[float]
    rounds: int
    norm_bound: float | None
    fallback: _Fallback | None  # TSVC's cone form: which of two solutions was returned
    routes: list[str]  # the plain hinge's solver routes, in order: "dual" | "primal" | "qp" | "smoothing" | "cocoa"

class _Progress(TypedDict):
    iteration: int  # non-decreasing within a binary problem
    objective: float
    residual: float  # of the stopping rule, of kind `quantity`
    quantity: str  # "gradient_norm" | "kkt_violation" | "duality_gap" | "relative_decrease" | "final"
    problem: int  # the binary problem, 0-based
    n_problems: int

METHODS: list[str]

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
    def kind(self) -> str: ...  # "linear" | "kernel" | "mapped" | "basis_expansion"
    @property
    def coef(self) -> npt.NDArray[np.float64]: ...
    @property
    def intercept(self) -> npt.NDArray[np.float64]: ...
    @property
    def support_vectors(self) -> npt.NDArray[np.float64] | tuple[Any, Any, Any, tuple[int, int]] | None: ...
    @property
    def kernel(self) -> str | None: ...
    @property
    def n_parameters(self) -> int: ...
    def expansion(self) -> BasisExpansionMap | None: ...
    def decision_function(self, x: _Means) -> npt.NDArray[np.float64]: ...
    def predict(self, x: _Means) -> npt.NDArray[np.int64]: ...
    def predict_proba(self, x: _Means) -> npt.NDArray[np.float64]: ...
    def with_platt(self, a: float, b: float) -> Model: ...
    def to_json(self, classes: list[int] | None = None) -> str: ...
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
    start: Model | None = None,
    callback: Callable[[_Progress], object] | None = None,
) -> tuple[Model, list[_Report], npt.NDArray[np.int64] | None]:
    """Fits any registry method (GIL released): the model, one report per binary problem, and the support
    vectors' training indices where the method selects them (the SVM). ``callback`` is called (with the
    GIL) with a record per solver event; an exception it raises stops the fit and is raised here."""
def default_gaussian_gamma(x: _Means) -> float:
    """SVM+'s default ``γ = 1/D``, ``D`` the mean squared distance between rows."""
def default_params(method: str) -> str: ...
def _panic_inside_guard(message: str) -> None:
    """Panics inside the guard that turns core panics into ``UsvmError`` (for its test)."""
def uses_privileged(method: str) -> bool:
    """Whether ``method`` learns from privileged features ``x_star`` (without them: the plain SVM)."""

class Shard:
    """One partition's rows for a sharded fit (method ``gsu``, ``iso``, ``hinge`` or ``power``, exact
    solver); pickles as its rows."""
    def __init__(
        self,
        params_json: str,
        x: _Means,
        y: npt.NDArray[np.int64],
        *,
        cov: _Cov = None,
        sample_weight: npt.NDArray[np.float64] | None = None,
    ) -> None: ...
    @property
    def n_samples(self) -> int: ...
    def answer(self, question: bytes) -> bytes:
        """The shard's partial sums for an encoded question, encoded (GIL released); the hinge's dual
        method keeps its multipliers in the shard."""
    def answer_with_state(self, state: DualState | None, question: bytes) -> tuple[DualState | None, bytes]:
        """The answer from the dual method's multipliers ``state`` and the multipliers after it, for an
        engine whose tasks keep no state."""
    def correct(self, model: Model) -> int:
        """How many of its rows ``model`` classifies as labelled."""
    @staticmethod
    def from_bytes(data: bytes) -> Shard: ...

class DualState:
    """A shard's multipliers in the sharded hinge's dual method; pickles as its numbers."""
    @property
    def rounds(self) -> int: ...
    @staticmethod
    def from_bytes(data: bytes) -> DualState: ...

def question_keeps_state(question: bytes) -> bool:
    """Whether an encoded question is a round of the dual method (answer it with ``answer_with_state``)."""

def fit_sharded(
    params_json: str, ask: Callable[[bytes], list[bytes]], *, start: Model | None = None
) -> tuple[Model, list[_Report], dict[str, Any]]:
    """Runs the exact solver on the sums of the shards' answers; ``ask(question)`` returns every shard's
    encoded answer in partition order. The dict: ``n_shards``, ``n_samples``, ``rounds``, ``total_rounds``,
    ``bytes_sent``, ``bytes_received``."""
