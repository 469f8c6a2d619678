"""BE-SVM (Aghazadeh & Carlsson): a squared-hinge linear SVM on normalised similarities to a basis.

``BasisExpansion`` is the feature map as a scikit-learn transformer; ``BasisExpansionClassifier`` fits the
map and the SVM in one call into the Rust core and exposes the fitted map as ``expansion_``.
"""

from __future__ import annotations

import json
import math
import numbers
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _usvm
from ._base import RegistryClassifier
from ._checks import FLOATS as _FLOATS
from ._persist import CoreState

__all__ = ["BasisExpansion", "BasisExpansionClassifier"]

_SIMILARITIES = ("linear", "rbf", "rigid", "deformable")
_SELECTIONS = ("random", "index", "kmedoids", "nystroem")


def _seed(random_state: Any) -> int:
    if random_state is None:
        return 0
    if (
        isinstance(random_state, numbers.Integral)
        and not isinstance(random_state, bool)
        and random_state >= 0
    ):
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    raise ValueError(
        f"random_state must be a non-negative integer, a RandomState or None; got {random_state!r}"
    )


def _nonneg_int(name: str, value: Any) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer; got {value!r}")
    return int(value)


class _ExpansionParams:
    """Validation and the core's JSON settings, shared by the transformer and the classifier."""

    similarity: Any
    gamma: Any
    shift: Any
    local_shift: Any
    grid: Any
    basis_size: Any
    basis_selection: Any
    random_state: Any

    def _measures(self, X: Any) -> list[dict]:
        names = [self.similarity] if isinstance(self.similarity, str) else list(self.similarity)
        if not names:
            raise ValueError("similarity needs at least one measure")
        shift = _nonneg_int("shift", self.shift)
        local_shift = _nonneg_int("local_shift", self.local_shift)
        measures = []
        for name in names:
            if name not in _SIMILARITIES:
                raise ValueError(
                    f"similarity must be one of {_SIMILARITIES} (or a list of them); got {name!r}"
                )
            if name == "linear":
                measures.append({"type": "linear"})
            elif name == "rbf":
                if isinstance(self.gamma, str):
                    if self.gamma != "scale":
                        raise ValueError(f"gamma must be 'scale' or a positive number; got {self.gamma!r}")
                    gamma = _usvm.gamma_scale(X)
                else:
                    gamma = self.gamma
                    if not isinstance(gamma, numbers.Real) or not math.isfinite(gamma) or gamma <= 0:
                        raise ValueError(f"gamma must be 'scale' or a positive number; got {gamma!r}")
                measures.append({"type": "rbf", "gamma": float(gamma)})
            else:
                if self.grid is None:
                    raise ValueError(f"similarity {name!r} needs grid=(height, width, channels)")
                g = tuple(self.grid)
                if len(g) == 2:
                    g = (*g, 1)
                if len(g) != 3 or any(not isinstance(v, numbers.Integral) or v < 1 for v in g):
                    raise ValueError(
                        f"grid must be (height, width[, channels]) of positive integers; got {self.grid!r}"
                    )
                grid = {"height": int(g[0]), "width": int(g[1]), "channels": int(g[2])}
                if name == "rigid":
                    measures.append({"type": "rigid", "grid": grid, "shift": shift})
                else:
                    measures.append(
                        {"type": "deformable", "grid": grid, "shift": shift, "local_shift": local_shift}
                    )
        return measures

    def _expansion_params(self, X: Any) -> dict:
        size = self.basis_size
        if isinstance(size, numbers.Integral) and not isinstance(size, bool):
            if size < 1:
                raise ValueError(f"basis_size must be a positive count or a fraction in (0, 1]; got {size!r}")
            basis_size: Any = {"count": int(size)}
        elif isinstance(size, numbers.Real) and not isinstance(size, bool) and 0 < size <= 1:
            basis_size = {"fraction": float(size)}
        else:
            raise ValueError(f"basis_size must be a positive count or a fraction in (0, 1]; got {size!r}")
        if self.basis_selection not in _SELECTIONS:
            raise ValueError(f"basis_selection must be one of {_SELECTIONS}; got {self.basis_selection!r}")
        seed = _seed(self.random_state)
        selection: Any = {
            "random": {"name": "random", "seed": seed},
            "index": {"name": "index"},
            "kmedoids": {"name": "k_medoids", "seed": seed, "max_iter": 100},
            "nystroem": {"name": "index"},
        }[self.basis_selection]
        return {
            "measures": self._measures(X),
            "basis_size": basis_size,
            "selection": selection,
            "normalisation": "nystroem" if self.basis_selection == "nystroem" else "be_svm",
        }


class BasisExpansion(CoreState, _ExpansionParams, TransformerMixin, BaseEstimator):
    """The BE-SVM feature map ``φ(x) = (φ̃(x) - μ)/m``, ``φ̃(x) = [s(b_1, x), …, s(b_B, x)]``.

    The basis ``b_1..b_B`` is chosen from the training set; ``μ`` and ``m`` (mean of the maps, mean norm of
    the centred maps) come from the training set only. Several similarities concatenate their maps.

    Parameters
    ----------
    similarity : str or list of str, default="rbf"
        ``"linear"``, ``"rbf"``, ``"rigid"`` (eq. 11: max cross-correlation over global shifts up to
        ``shift`` cells) or ``"deformable"`` (eq. 12: and per-cell local shifts up to ``local_shift``).
        The last two need ``grid`` and are indefinite.
    gamma : "scale" or float, default="scale"
        RBF ``γ``; ``"scale"`` is ``1/(n_features · X.var())``.
    shift, local_shift : int, default=1
        Shift ranges (in cells) of the invariant similarities.
    grid : (height, width[, channels]) or None
        Layout of each row of ``X``: row-major cells, channels innermost.
    basis_size : int or float, default=1.0
        A count, or a fraction of the training set.
    basis_selection : {"random", "index", "kmedoids", "nystroem"}, default="random"
        ``nystroem`` takes evenly spaced indices and normalises by ``K_BB^{-1/2}`` (spectrum clipped).
    random_state : int, default=0
        Seed of the random and k-medoids selections.

    >>> import numpy as np
    >>> from usvm import BasisExpansion
    >>> X = np.random.default_rng(0).normal(size=(50, 4))
    >>> Z = BasisExpansion(basis_size=10).fit_transform(X)
    >>> Z.shape, bool(abs(Z.mean()) < 1e-12)
    ((50, 10), True)
    """

    def __init__(
        self,
        *,
        similarity: Any = "rbf",
        gamma: Any = "scale",
        shift: int = 1,
        local_shift: int = 1,
        grid: Any = None,
        basis_size: Any = 1.0,
        basis_selection: str = "random",
        random_state: Any = 0,
    ) -> None:
        self.similarity = similarity
        self.gamma = gamma
        self.shift = shift
        self.local_shift = local_shift
        self.grid = grid
        self.basis_size = basis_size
        self.basis_selection = basis_selection
        self.random_state = random_state

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit(self, X: Any, y: Any = None) -> BasisExpansion:
        X = validate_data(self, X, accept_sparse="csr", dtype=_FLOATS, order=None, ensure_min_samples=2)
        params = self._expansion_params(X)
        self.map_ = _usvm.fit_basis_expansion(X, json.dumps(params))
        self.basis_indices_ = np.asarray(self.map_.basis_indices, dtype=np.intp)
        self.n_features_out_ = int(self.map_.n_outputs)
        self.measures_ = params["measures"]
        return self

    def transform(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=_FLOATS, order=None, reset=False)
        return self.map_.transform(X)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        check_is_fitted(self)
        return np.asarray([f"be{k}" for k in range(self.n_features_out_)], dtype=object)


class BasisExpansionClassifier(_ExpansionParams, RegistryClassifier):
    """BE-SVM: ``min ½‖w‖² + C Σ c_i max(0, 1 - y_i(wᵀφ(x_i) + b))²`` on the :class:`BasisExpansion` map,
    one-vs-rest for more than two classes, solved to high precision by a primal Newton method.

    Parameters are those of :class:`BasisExpansion` plus ``C`` (default 1, the paper's choice: the
    normalisation makes it work across measures and basis sizes), ``fit_intercept`` (an unregularised
    bias), ``tol`` (relative gradient norm), ``max_iter``, ``n_jobs`` (threads of the fit), ``verbose`` and
    ``callback`` (progress), as :class:`GSUClassifier`'s. After ``fit``: ``classes_``, ``coef_``
    (K × width of the map), ``intercept_``, ``expansion_`` (the fitted :class:`BasisExpansion`),
    ``n_parameters_`` (numbers stored to predict), ``objective_``, ``converged_``; ``to_json()`` writes the
    model file that ``usvm predict`` reads. ``objective_`` (one per binary problem) is the library's
    ``J = λ/2‖w‖² + (1/ℓ) Σ c_i L_i`` with ``λ = 1/(Cℓ)``, i.e. the objective above divided by ``C·ℓ``:
    multiply by ``C * n_samples`` to compare with LIBLINEAR's or the paper's primal value.

    >>> import numpy as np
    >>> from usvm import BasisExpansionClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(1, 1, (30, 2)), rng.normal(-1, 1, (30, 2))])
    >>> y = np.repeat([1, 0], 30)
    >>> clf = BasisExpansionClassifier(basis_size=0.5).fit(X, y)
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    def __init__(
        self,
        *,
        similarity: Any = "rbf",
        gamma: Any = "scale",
        shift: int = 1,
        local_shift: int = 1,
        grid: Any = None,
        basis_size: Any = 1.0,
        basis_selection: str = "random",
        C: float = 1.0,
        fit_intercept: bool = True,
        tol: float = 1e-6,
        max_iter: int = 1000,
        random_state: Any = 0,
        n_jobs: int | None = None,
        verbose: int = 0,
        callback: Any = None,
    ) -> None:
        self.similarity = similarity
        self.gamma = gamma
        self.shift = shift
        self.local_shift = local_shift
        self.grid = grid
        self.basis_size = basis_size
        self.basis_selection = basis_selection
        self.C = C
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.callback = callback

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> BasisExpansionClassifier:
        return self._fit(X, y, sample_weight=sample_weight, ensure_min_samples=2)

    def _check_params(self) -> None:
        for name in ("C", "tol"):
            v = getattr(self, name)
            if not isinstance(v, numbers.Real) or isinstance(v, bool) or not math.isfinite(v) or v <= 0:
                raise ValueError(f"{name} must be a positive finite number; got {v!r}")
        if (
            not isinstance(self.max_iter, numbers.Integral)
            or isinstance(self.max_iter, bool)
            or self.max_iter < 1
        ):
            raise ValueError(f"max_iter must be a positive integer; got {self.max_iter!r}")

    def _seed(self) -> int:
        return _seed(self.random_state)

    def _registry_params(
        self, X: Any, cov: Any, sample_weight: np.ndarray | None, star: Any
    ) -> dict[str, Any]:
        expansion = self._expansion_params(X)
        grid = None
        similarity = []
        for m in expansion["measures"]:
            if m["type"] in ("linear", "rbf"):
                similarity.append("linear" if m["type"] == "linear" else f"rbf:{m['gamma']!r}")
                continue
            grid = m["grid"]
            shifts = [m["shift"]] + ([m["local_shift"]] if m["type"] == "deformable" else [])
            similarity.append(":".join([m["type"], *map(str, shifts)]))
        size = expansion["basis_size"]
        return {
            "method": "besvm",
            "regularization": {"C": float(self.C)},
            "fit_intercept": bool(self.fit_intercept),
            "tol": float(self.tol),
            "max_iter": int(self.max_iter),
            "similarity": similarity,
            "shape": None if grid is None else f"{grid['height']}x{grid['width']}x{grid['channels']}",
            # the whole training set is the core's default, None
            "basis_size": (
                None
                if size == {"fraction": 1.0}
                else str(size["count"])
                if "count" in size
                else repr(size["fraction"])
            ),
            "basis_selection": self.basis_selection,
        }

    def _fitted(self, X: Any, y_enc: np.ndarray, cov: Any, sw: np.ndarray | None) -> None:
        self.coef_ = self.model_.coef
        self.intercept_ = self.model_.intercept
        self.n_parameters_ = int(self.model_.n_parameters)
        expansion = BasisExpansion(
            similarity=self.similarity,
            gamma=self.gamma,
            shift=self.shift,
            local_shift=self.local_shift,
            grid=self.grid,
            basis_size=self.basis_size,
            basis_selection=self.basis_selection,
            random_state=self.random_state,
        )
        expansion.map_ = self.model_.expansion()
        expansion.basis_indices_ = np.asarray(expansion.map_.basis_indices, dtype=np.intp)
        expansion.n_features_out_ = int(expansion.map_.n_outputs)
        expansion.measures_ = self._measures(X)
        expansion.n_features_in_ = self.n_features_in_
        if hasattr(self, "feature_names_in_"):
            expansion.feature_names_in_ = self.feature_names_in_
        self.expansion_ = expansion
