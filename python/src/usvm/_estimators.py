"""``GSUClassifier``: the linear methods on uncertain data (gsu, hinge, iso, sampling, power) through the
registry, with Platt scaling and test-time uncertainty."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from scipy.special import expit, ndtr
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.metaestimators import available_if

from . import _usvm
from ._base import RegistryClassifier, has_probability
from ._checks import positive_int, positive_real
from ._covariance import LowRankCovariance, _as_cov, _margin_variance, _take_cov

__all__ = ["GSUClassifier", "LowRankCovariance"]

_METHODS = ("gsu", "hinge", "iso", "sampling", "power")
_SOLVERS = ("exact", "sgd")
# Probabilists' Gauss-Hermite rule for E[g(Z)], Z ~ N(0, 1): exact for polynomials of degree < 80.
_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite_e.hermegauss(40)
_GH_WEIGHTS = _GH_WEIGHTS / _GH_WEIGHTS.sum()


class GSUClassifier(RegistryClassifier):
    r"""Linear SVM for uncertain data: LSVM-GSU (Tzelepis et al.) and its baselines.

    Each training example is a Gaussian ``X_i ~ N(x_i, Σ_i)`` (mean ``x_i`` = row ``i`` of ``X``,
    covariance ``Σ_i`` from ``X_cov``), and the hyperplane ``f(x) = wᵀx + b`` minimises

    .. math::

        J(w, b) = \frac{λ}{2}\|w\|^2 + \frac{1}{\sum_i c_i} \sum_i c_i\, L(d_i, σ_i),
        \quad d_i = 1 - y_i(w^T x_i + b),\quad σ_i = \sqrt{w^T Σ_i w},

    with labels ``y_i ∈ {-1, +1}``, sample weights ``c_i`` (1 by default) and, for ``method="gsu"``,
    the expected hinge loss in closed form (Φ, φ the standard normal CDF and density)

    .. math::

        L(d, σ) = E[\max(0, 1 - y(w^T X + b))] = d\,Φ(d/σ) + σ\,φ(d/σ),\qquad L(d, 0) = \max(0, d).

    The bias is not regularised. ``C`` selects the equivalent C-form
    ``½‖w‖² + C Σ_i c_i L_i`` (``λ = 1/(C n)``). Two classes give one hyperplane (``f > 0`` means
    ``classes_[1]``); more classes are fitted one-vs-rest and predicted by the largest ``f_k``.

    Methods (``method=``), all on the same objective:

    - ``"gsu"``: LSVM-GSU, the expected hinge loss above. With ``subspace_variance=p`` each Gaussian is
      first projected on its leading eigenvectors holding more than a fraction ``p`` of its variance
      (mean included, thesis 3.2).
    - ``"hinge"``: LSVM, the hinge loss on the means (``X_cov`` is ignored).
    - ``"iso"``: LSVM-iso, GSU with each ``Σ_i`` replaced by ``(tr Σ_i / d) I``.
    - ``"sampling"``: LSVM-sampling, the hinge loss on ``samples`` draws from each Gaussian
      (seeded by ``random_state``).
    - ``"power"``: Power SVM, the hinge at the worst point of a ball of radius
      ``r_i = radius_scale · √(tr Σ_i / d)``: ``max(0, 1 - y_i(wᵀx_i + b) - r_i‖w‖)``.

    Parameters
    ----------
    lam : float, default=0.01
        Regularisation λ > 0. Ignored when ``C`` is given.
    C : float or None, default=None
        If given, ``λ = 1 / (C · n_samples)`` (the C-form ``½‖w‖² + C Σ c_i L_i``, in which sample
        weights multiply C per example).
    method : {"gsu", "hinge", "iso", "sampling", "power"}, default="gsu"
    subspace_variance : float in (0, 1] or None, default=None
        ``method="gsu"`` only: learn in per-example linear subspaces (needs diagonal, full or low-rank
        ``X_cov``; without ``X_cov`` every example has zero covariance and keeps its mean).
    solver : {"exact", "sgd"}, default="exact"
        ``"exact"``: Newton-CG with a vanishing floor on ``σ_i``, stopping at
        ``‖∇J‖ ≤ tol · ‖∇J(0)‖``. ``"sgd"``: the thesis' mini-batch stochastic sub-gradient method
        (``iterations`` steps of ``batch`` examples, step ``1/(λt)``).
    tol : float, default=1e-6
        Relative gradient tolerance of the exact solver.
    max_iter : int, default=1000
        Newton iterations of the exact solver (the plain hinge: its routes' iterations together, dual
        coordinate descent's counted as passes over the data).
    gap_tol : float in (0, 1), default=1e-10
        The exact solver on zero covariances (the plain hinge): stop at this relative duality gap
        ``(J - D)/J``, a certified bound (``J ≤ J*/(1 - gap_tol)``); with covariances (the expected
        hinge), accept the exact finish on the examples at the loss' apex once it certifies this gap.
        Each entry of ``reports_`` has its ``"duality_gap"`` (the expected hinge's too).
    route : {None, "dual", "primal", "qp"}, default=None
        The exact solver on zero covariances (the plain hinge): ``"dual"`` coordinate descent,
        ``"primal"`` Newton on the smoothed hinge (unaffected by feature scaling), each with exact
        finishes, or ``"qp"``, the primal QP over every example by an interior-point method, certified
        at its first iterate that meets ``gap_tol``, else made exact (10–30 factorisations of an
        ``(n + 1)``-square matrix, whatever ``lam`` and the scaling), taken
        alone; ``None`` chooses from the data and hands a stalled route's iterate to another. Each entry
        of ``reports_`` lists its ``"routes"``.
    iterations : int, default=1000
        SGD iterations ``T``.
    batch : int, default=100
        SGD mini-batch size ``k``.
    samples : int, default=10
        ``method="sampling"``: draws per example.
    radius_scale : float, default=1.0
        ``method="power"``: radius multiplier.
    max_rounds : int, default=100
        ``method="power"``: maximum alternating rounds (each a full hinge-SVM solve on the worst-case
        points of the previous round; the objective is non-convex).
    fit_intercept : bool, default=True
    warm_start : bool, default=False
        Start the solver from the previous call's ``coef_`` and ``intercept_`` (when the classes and the
        number of features are unchanged), e.g. along a path of decreasing ``lam``. For ``method="power"``
        the first round then solves the hinge SVM on the points shifted by the previous hyperplane.
    probability : bool, default=False
        Fit Platt scaling ``P(y=1|f) = 1/(1 + exp(A f + B))`` on 5-fold cross-validated decision values
        (one sigmoid per hyperplane; one-vs-rest probabilities are normalised). Enables
        ``predict_proba``; costs five extra fits.
    random_state : int, RandomState instance or None, default=0
        Seeds the sampling method, the SGD solver and the Platt cross-validation split.

    n_jobs : int or None, default=None
        Threads of the fit (a pool of its own, kept for the next fit from the same thread). ``None``:
        ``OMP_NUM_THREADS`` when set (joblib's process workers set it to their share of the cores), else every
        core; ``-1``: every core.
    verbose : int, default=0
        0: silent; 1: a progress bar (tqdm, when installed and standard error is a terminal) or a line on
        standard error about once a second, with the iteration, the objective and the stopping residual.
    callback : callable or None, default=None
        Called with a dict per solver event: ``iteration``, ``objective``, ``residual``, ``quantity`` (its
        name: ``"gradient_norm"``, ``"kkt_violation"``, ``"duality_gap"``, ``"relative_decrease"``, or
        ``"final"`` for each binary problem's last event, which states its report), ``problem`` and
        ``n_problems`` (one-vs-rest). An exception it raises stops the fit and is raised by ``fit``.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Read-only: a view of the fitted model's own coefficients (``coef_.copy()`` to change them). A model
        fitted on wide sparse data stores only the columns some example uses (all others are exactly 0); its
        full matrix is made on the first read of ``coef_``.
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
        The distinct labels of ``y``, sorted.
    n_iter_ : int
        Solver iterations (the largest over one-vs-rest problems).
    objective_ : ndarray of shape (n_problems,)
        ``J(w, b)`` at the solution, per binary problem, in the λ-form ``λ_/2‖w‖² + (1/n) Σ c_i L_i``
        with the weights actually used (normalised to mean 1 unless ``C`` is given).
    converged_ : ndarray of bool, shape (n_problems,)
    gradient_norm_ : ndarray of shape (n_problems,)
        ``‖∇J‖`` at the solution.
    lam_ : float
        The λ actually used (from ``lam`` or ``C``).
    probA_, probB_ : ndarray of shape (n_problems,)
        Platt parameters (``probability=True`` only).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape ``(n_features_in_,)``
        Only when ``X`` has string feature names.

    Notes
    -----
    Uncertainty is passed like other sample-aligned data: ``fit(X, y, X_cov=...)``. To have
    ``cross_val_score``, ``GridSearchCV`` and friends split ``X_cov`` together with ``X``, enable
    metadata routing and request it::

        sklearn.set_config(enable_metadata_routing=True)
        clf = GSUClassifier().set_fit_request(X_cov=True, sample_weight=True)
        GridSearchCV(clf, {"lam": [1e-3, 1e-2]}).fit(X, y, X_cov=V)

    Use :class:`LowRankCovariance` rather than a plain ``(U, v)`` tuple when the low-rank form must be
    split by cross-validation.

    Examples
    --------
    >>> import numpy as np
    >>> from usvm import GSUClassifier
    >>> X = np.array([[1.0, 2.0], [2.0, 3.0], [-1.0, -1.5], [-2.0, -2.0]])
    >>> V = np.array([[0.1, 0.1], [0.2, 0.1], [0.1, 0.3], [0.1, 0.1]])  # diagonal variances
    >>> clf = GSUClassifier(lam=0.1).fit(X, ["a", "a", "b", "b"], X_cov=V)
    >>> clf.predict(X).tolist()
    ['a', 'a', 'b', 'b']
    >>> bool(clf.converged_.all()), clf.coef_.shape
    (True, (1, 2))
    >>> p = clf.positive_side_probability(X, X_cov=V)  # P(f(X_i) > 0), X_i ~ N(x_i, Σ_i)
    >>> bool(p[0] < 0.5 < p[2])
    True
    """

    _core_checks_finite = True

    def __init__(
        self,
        *,
        lam: float = 0.01,
        C: float | None = None,
        method: str = "gsu",
        subspace_variance: float | None = None,
        solver: str = "exact",
        tol: float = 1e-6,
        max_iter: int = 1000,
        gap_tol: float = 1e-10,
        route: str | None = None,
        iterations: int = 1000,
        batch: int = 100,
        samples: int = 10,
        radius_scale: float = 1.0,
        max_rounds: int = 100,
        fit_intercept: bool = True,
        warm_start: bool = False,
        probability: bool = False,
        random_state: Any = 0,
        n_jobs: int | None = None,
        verbose: int = 0,
        callback: Any = None,
    ) -> None:
        self.lam = lam
        self.C = C
        self.method = method
        self.subspace_variance = subspace_variance
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.gap_tol = gap_tol
        self.route = route
        self.iterations = iterations
        self.batch = batch
        self.samples = samples
        self.radius_scale = radius_scale
        self.max_rounds = max_rounds
        self.fit_intercept = fit_intercept
        self.warm_start = warm_start
        self.probability = probability
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.callback = callback

    def _check_params(self) -> None:
        positive_real("lam", self.lam)
        positive_real("C", self.C, allow_none=True)
        positive_real("tol", self.tol)
        positive_real("gap_tol", self.gap_tol)
        if self.gap_tol >= 1:
            raise ValueError(f"gap_tol must be in (0, 1); got {self.gap_tol!r}")
        for name in ("max_iter", "iterations", "batch", "samples", "max_rounds"):
            positive_int(name, getattr(self, name))
        if self.route not in (None, "dual", "primal", "qp"):
            raise ValueError(f"route must be None, 'dual', 'primal' or 'qp'; got {self.route!r}")
        if self.method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}; got {self.method!r}")
        if self.solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {_SOLVERS}; got {self.solver!r}")
        p = self.subspace_variance
        if p is not None:
            if self.method != "gsu":
                raise ValueError(f"subspace_variance applies to method='gsu' only, not {self.method!r}")
            if not isinstance(p, numbers.Real) or not (0 < p <= 1):
                raise ValueError(f"subspace_variance must be in (0, 1]; got {p!r}")
        r = self.radius_scale
        if not isinstance(r, numbers.Real) or not math.isfinite(r) or r < 0:
            raise ValueError(f"radius_scale must be a finite non-negative number; got {r!r}")

    def _registry_params(
        self, X: Any, cov: Any, sample_weight: np.ndarray | None, star: Any
    ) -> dict[str, Any]:
        if self.solver == "exact":
            solver: dict[str, Any] = {
                "name": "exact",
                "tol": float(self.tol),
                "max_iter": int(self.max_iter),
                "gap_tol": float(self.gap_tol),
                "route": self.route,
            }
        else:
            solver = {"name": "sgd", "iterations": int(self.iterations), "batch": int(self.batch)}
        params: dict[str, Any] = {
            "method": self.method,
            "regularization": {"lambda": float(self.lam)} if self.C is None else {"C": float(self.C)},
            "fit_intercept": bool(self.fit_intercept),
            "solver": solver,
        }
        if self.method == "gsu" and self.subspace_variance is not None and cov is not None:
            params["subspace_variance"] = float(self.subspace_variance)
        elif self.method == "sampling":
            params["samples"] = int(self.samples)
        elif self.method == "power":
            params["radius_scale"] = float(self.radius_scale)
            params["max_rounds"] = int(self.max_rounds)
        return params

    def fit(self, X: Any, y: Any, *, X_cov: Any = None, sample_weight: Any = None) -> GSUClassifier:
        """Fits the hyperplane(s).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The example means. float64 and float32, C or Fortran order, and CSR matrices are read
            without an intermediate copy.
        y : array-like of shape (n_samples,)
            Labels (any hashable type); at least two classes.
        X_cov : array-like, sparse matrix, LowRankCovariance or (U, v) pair, default=None
            Per-example covariances ``Σ_i``: an (n_samples,) array of variances ``s_i²`` (``Σ_i = s_i² I``),
            an (n_samples, n_features) array or CSR matrix of variances (diagonal ``Σ_i``), an
            (n_samples, n_features, n_features) array (full), or a low-rank
            ``Σ_i = U_i U_iᵀ + diag(v_i)``. ``None`` means ``Σ_i = 0`` (plain vectors: the hinge SVM).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights ``c_i``.

        Returns
        -------
        self
        """
        return self._fit(X, y, X_cov=X_cov, sample_weight=sample_weight)

    @property
    def coef_(self) -> np.ndarray:
        # Read from the model on each access (an AttributeError before fit): a model fitted on wide sparse
        # data stores its used columns only, and its full matrix is made on the first read, not in fit.
        return self.model_.coef

    def _fitted(self, X: Any, y_enc: np.ndarray, cov: Any, sw: np.ndarray | None) -> None:
        self.intercept_ = self.model_.intercept
        self.gradient_norm_ = np.array([r["gradient_norm"] for r in self.reports_], dtype=np.float64)
        self.lam_ = float(self.lam) if self.C is None else 1.0 / (self.C * X.shape[0])
        if self.probability:
            self.probA_, self.probB_ = self._fit_platt(X, y_enc, cov, sw, len(self.classes_))

    def _fit_platt(
        self, X: Any, y_enc: np.ndarray, cov: Any, sw: np.ndarray | None, n_classes: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Platt sigmoids on cross-validated decision values (as LIBSVM; never on training scores
        unless a class has a single example)."""
        n_problems = 1 if n_classes == 2 else n_classes
        scores = np.empty((X.shape[0], n_problems))
        n_splits = min(5, int(np.bincount(y_enc).min()))
        if n_splits >= 2:
            folds = StratifiedKFold(n_splits, shuffle=True, random_state=self._seed())
            for train, test in folds.split(np.zeros(len(y_enc)), y_enc):
                sw_train = None if sw is None else sw[train]
                if sw_train is not None and len(np.unique(y_enc[train][sw_train > 0])) < 2:
                    sw_train = None
                model, _, _ = self._fit_core(X[train], y_enc[train], _take_cov(cov, train), sw_train)
                scores[test] = np.asarray(model.decision_function(X[test])).reshape(len(test), -1)
        else:
            scores[:] = self._scores(X)
        A, B = np.empty(n_problems), np.empty(n_problems)
        for k in range(n_problems):
            positive = y_enc == (1 if n_problems == 1 else k)
            A[k], B[k], _, _ = _usvm.fit_platt(np.ascontiguousarray(scores[:, k]), positive)
        return A, B

    # ----------------------------------------------------------------------------------- predict

    @available_if(has_probability)
    def predict_proba(self, X: Any, *, X_cov: Any = None) -> np.ndarray:
        """Platt-scaled class probabilities, shape (n_samples, n_classes).

        Without ``X_cov``: ``P(y = 1 | x) = 1/(1 + exp(A f(x) + B))``. With test-time covariances
        ``X_cov`` (same forms as in ``fit``) the sigmoid is averaged over the test example's Gaussian,
        ``E[1/(1 + exp(A f(X) + B))]`` with ``f(X) ~ N(f(x), wᵀΣw)`` (40-point Gauss-Hermite rule), which
        equals the plain Platt probability when ``Σ = 0``. One-vs-rest probabilities are normalised to
        sum to one.
        """
        scores = self._scores(X)
        A, B = self.probA_, self.probB_
        if X_cov is None:
            p = expit(-(scores * A + B))
        else:
            s = np.sqrt(_margin_variance(_as_cov(X_cov, scores.shape[0], self.coef_.shape[1]), self.coef_))
            z = scores[:, :, None] + s[:, :, None] * _GH_NODES
            p = expit(-(z * A[:, None] + B[:, None])) @ _GH_WEIGHTS
        if p.shape[1] == 1:
            return np.hstack([1.0 - p, p])
        total = p.sum(axis=1, keepdims=True)
        return np.divide(p, total, out=np.full_like(p, 1.0 / p.shape[1]), where=total > 0)

    @available_if(has_probability)
    def predict_log_proba(self, X: Any, *, X_cov: Any = None) -> np.ndarray:
        """``log`` of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X, X_cov=X_cov))

    def positive_side_probability(self, X: Any, X_cov: Any) -> np.ndarray:
        """``P(f_k(X) > 0) = Φ(f_k(x) / √(w_kᵀ Σ w_k))`` for a test example ``X ~ N(x, Σ)``: the probability
        that the noisy example falls on the positive side of each hyperplane (DESIGN 2.8; no Platt fit
        needed). Where ``w_kᵀΣw_k = 0`` it is 1, 0 or ½ as ``f_k > 0``, ``< 0`` or ``= 0``.

        Returns shape (n_samples,) for two classes (the side of ``classes_[1]``), else
        (n_samples, n_classes), one column per one-vs-rest hyperplane (not normalised).
        """
        scores = self._scores(X)
        var = _margin_variance(_as_cov(X_cov, scores.shape[0], self.coef_.shape[1]), self.coef_)
        s = np.sqrt(np.maximum(var, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(s > 0, ndtr(scores / np.where(s > 0, s, 1.0)), 0.5 * (1 + np.sign(scores)))
        return p.ravel() if p.shape[1] == 1 else p
