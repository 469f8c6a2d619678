"""``decision_function`` and ``predict`` once, for every estimator: each supplies ``_scores(X)``, the
decision values as an (n_samples, n_outputs) array (one output for two classes, one per class for
one-vs-rest)."""

from __future__ import annotations

from typing import Any

import numpy as np


class DecisionMixin:
    """Decision values and predictions from ``_scores`` and ``classes_``."""

    def _scores(self, X: Any) -> np.ndarray:  # pragma: no cover - every estimator defines it
        raise NotImplementedError

    def decision_function(self, X: Any) -> np.ndarray:
        """``f(x)``: shape (n_samples,) for two classes (``> 0`` means ``classes_[1]``), else
        (n_samples, n_classes), one column per class (one-vs-rest)."""
        scores = self._scores(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X: Any) -> np.ndarray:
        """The class of each example: ``classes_[f > 0]`` for two classes, else ``classes_[argmax_k f_k]``."""
        scores = self._scores(X)
        if scores.shape[1] == 1:
            return self.classes_[(scores[:, 0] > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]
