"""
TSVC: bounded input uncertainty
===============================

Total support vector classification (Bi & Zhang, NIPS 2004) lets every training input move within a
ball ``‖Δx_i‖ ≤ δ_i`` to wherever it fits the classifier best, and fits the hyperplane to the moved
points. Here a quarter of the examples of a 2-D set were measured badly, and their balls say how badly.
"""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import EllipseCollection

from usvm import KernelSVMClassifier, TSVCClassifier


def clouds(rng, n):
    """Two elongated Gaussian clouds; label 1 is the lower right one."""
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 2)) @ np.array([[1.0, 0.0], [0.6, 0.5]])
    return X + np.where(y[:, None] == 1, 1.0, -1.0) * np.array([0.96, -0.72]), y


rng = np.random.default_rng(0)
X, y = clouds(rng, 60)
delta = np.zeros(len(X))
bad = rng.choice(len(X), 15, replace=False)
delta[bad] = rng.uniform(0.5, 1.5, bad.size)
direction = rng.normal(size=(bad.size, 2))
direction /= np.linalg.norm(direction, axis=1, keepdims=True)
X[bad] += direction * delta[bad, None] * np.sqrt(rng.uniform(size=(bad.size, 1)))  # uniform in the ball

# %%
# For a fixed ``w`` the best move is ``Δx_i = y_i δ_i w/‖w‖`` (Lemma 1, ``y_i = ±1``): straight towards
# the example's own side. Substituting it leaves the non-convex problem
# ``min ½‖w‖² + C Σ max(0, 1 - y_i(wᵀx_i + b) - δ_i‖w‖)``, which the estimator solves by alternating a
# hinge SVM on the moved points with the moves (Algorithm 1); the plain linear SVM is ``δ_i = 0``.
C = 10.0
svm = KernelSVMClassifier(C=C, kernel="linear").fit(X, y)
tsvc = TSVCClassifier(C=C).fit(X, y, delta=delta)
print(f"TSVC objective (eq. 7) after each accepted round: {np.round(tsvc.objective_trace_[0], 3)}")

w = tsvc.coef_[0]
sign = 2 * y - 1  # y_i = ±1
moved = X + sign[:, None] * delta[:, None] * w / np.linalg.norm(w)  # x_i + Δx_i
before, after = (np.sum(sign[bad] * tsvc.decision_function(Z[bad]) < 1) for Z in (X, moved))
print(f"uncertain examples inside TSVC's margin (y_i f < 1): {before} as measured, {after} once moved")

X_test, y_test = clouds(np.random.default_rng(1), 4000)  # clean examples of the same clouds
for name, clf in [("linear SVM", svm), ("TSVC", tsvc)]:
    print(f"{name}: accuracy on 4000 clean test examples {clf.score(X_test, y_test):.3f}")

# %%
# The balls ``‖Δx_i‖ ≤ δ_i``, the moves TSVC chose (segments to the corrected points ``x_i + Δx_i``), and
# both boundaries ``f(x) = 0`` with their margins ``f(x) = ±1`` (dashed).
xx, yy = np.meshgrid(np.linspace(-4.5, 4.5, 300), np.linspace(-3.5, 3.5, 240))
grid = np.c_[xx.ravel(), yy.ravel()]
fig, ax = plt.subplots(figsize=(7.5, 6), layout="constrained")
for label, colour in [(0, "tab:blue"), (1, "tab:orange")]:
    m = y == label
    ax.scatter(*X[m].T, s=14, color=colour, label=f"class {label}", zorder=3)
    ax.add_collection(EllipseCollection(2 * delta[m], 2 * delta[m], 0, units="xy", offsets=X[m],
                                        offset_transform=ax.transData, facecolors="none",
                                        edgecolors=colour, alpha=0.6))
ax.plot(*np.stack([X[bad], moved[bad]]).transpose(2, 0, 1), color="k", lw=0.8, zorder=4)
ax.scatter(*moved[bad].T, s=30, marker="x", color="k", label="corrected $x_i + Δx_i$", zorder=5)
for name, clf, colour in [("linear SVM", svm, "tab:gray"), ("TSVC", tsvc, "tab:red")]:
    f = clf.decision_function(grid).reshape(xx.shape)
    ax.contour(xx, yy, f, levels=[-1, 0, 1], colors=colour, linestyles=["--", "-", "--"], linewidths=1.3)
    ax.plot([], [], color=colour, label=f"{name} boundary")
ax.set(xlabel="$x_1$", ylabel="$x_2$", xlim=(xx.min(), xx.max()), ylim=(yy.min(), yy.max()),
       aspect="equal", title="TSVC and the linear SVM, with the uncertainty balls")
ax.legend(loc="upper right")
plt.show()

# %%
# Every move has length ``δ_i`` and the direction ``±w/‖w‖``, so the segments are parallel, normal to
# the TSVC boundary, each towards its own class's side. An uncertain example inside the margin, or even
# on the wrong side, is charged only for what remains after its move — here nothing — while the linear
# SVM has to tilt its hyperplane and narrow its margin to fit the displaced means. The certain examples
# (``δ_i = 0``) stay put and constrain both classifiers alike. The clean test accuracies are those of
# one draw: the gap varies from draw to draw and need not favour TSVC.
