"""
GSU vs LSVM: boundaries with each example's uncertainty
=======================================================

Each training example is a Gaussian :math:`N(x_i, Σ_i)`. The plain linear SVM (LSVM) sees only the means
:math:`x_i`; LSVM-GSU minimises the *expected* hinge loss under each Gaussian. On the 2-D toy set of the
thesis' Figure 3.3 reproduction the two hyperplanes differ by about 17°.
"""

import pathlib

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Ellipse

import usvm

# The repository: from this file, or from docs/examples, where sphinx-gallery runs the examples.
HERE = pathlib.Path(__file__).parent if "__file__" in globals() else pathlib.Path.cwd()
ROOT = HERE.resolve().parents[1]
FIGURES = ROOT / "docs" / "figures"


def lines(name):
    """The non-empty lines of a shipped toy-set file, split into tokens."""
    return [line.split() for line in (FIGURES / name).read_text().splitlines() if line.strip()]


def entries(name):
    """One ``{key: value}`` dict per example of a LIBSVM-like ``gK key:value ...`` file."""
    return [dict(token.split(":") for token in tokens[1:]) for tokens in lines(name)]


def hyperplane(ax, clf, offset=0.0, **style):
    """The line ``wᵀx + b = offset``: through ``(offset - b) w/‖w‖²``, orthogonal to ``w``."""
    w, b = clf.coef_[0], clf.intercept_[0]
    point = (offset - b) * w / (w @ w)
    ax.axline(point, point + [-w[1], w[0]], **style)


# Means ``gK 1:v 2:v``, covariances ``gK i,j:v`` (1-based), labels ``gK ±1``.
X = np.array([[float(e[str(j)]) for j in (1, 2)] for e in entries("toy2d.means")])
S = np.array([[[float(e[f"{j},{k}"]) for k in (1, 2)] for j in (1, 2)] for e in entries("toy2d.cov")])
y = np.array([int(tokens[1]) for tokens in lines("toy2d.labels")])

# %%
# Fit both classifiers with the λ of the Figure 3.3 reproduction (λ = 0.05). LSVM-GSU minimises
#
# .. math::
#
#     \frac{λ}{2}\|w\|^2 + \frac{1}{\ell}\sum_i d_i\,Φ(d_i/σ_i) + σ_i\,φ(d_i/σ_i),
#     \qquad d_i = 1 - y_i(w^T x_i + b),\quad σ_i = \sqrt{w^T Σ_i w},
#
# and ``method="hinge"`` ignores ``X_cov``: it is the hinge loss :math:`\max(0, d_i)` on the means.

lam = 0.05
gsu = usvm.GSUClassifier(lam=lam, method="gsu").fit(X, y, X_cov=S)
lsvm = usvm.GSUClassifier(lam=lam, method="hinge").fit(X, y)

unit = [c.coef_[0] / np.linalg.norm(c.coef_[0]) for c in (gsu, lsvm)]
print(f"angle between the hyperplanes: {np.degrees(np.arccos(unit[0] @ unit[1])):.2f}°")

# %%
# Draw each :math:`Σ_i = V \operatorname{diag}(μ) V^T` as its 1-σ and 2-σ ellipses (semi-axes
# :math:`k\sqrt{μ_j}` along the eigenvectors) and each hyperplane :math:`w^T x + b = 0`; the dotted lines are
# GSU's margins :math:`w^T x + b = ±1`.

fig, ax = plt.subplots(figsize=(7, 7.5), layout="constrained")
colours = {1: "tab:blue", -1: "tab:red"}
for mean, cov, label in zip(X, S, y):
    mu, V = np.linalg.eigh(cov)
    angle = np.degrees(np.arctan2(V[1, 1], V[0, 1]))  # direction of the largest eigenvalue
    for k, alpha in ((1, 0.25), (2, 0.08)):
        width, height = 2 * k * np.sqrt(mu[::-1])
        ax.add_patch(Ellipse(mean, width, height, angle=angle, color=colours[label], alpha=alpha, lw=0))
for label, marker in ((1, "P"), (-1, "X")):
    ax.scatter(*X[y == label].T, s=70, marker=marker, color=colours[label], edgecolor="k", zorder=3,
               label=f"class {label:+d}: means, 1σ and 2σ ellipses")
hyperplane(ax, lsvm, color="0.35", ls="--", lw=2, label="LSVM (hinge on the means)")
hyperplane(ax, gsu, color="k", lw=2, label="LSVM-GSU (expected hinge)")
for offset in (-1, 1):
    hyperplane(ax, gsu, offset, color="k", ls=":", lw=1, label="LSVM-GSU margins" if offset > 0 else None)

ax.set(
    aspect="equal",
    xlabel="$x_1$",
    ylabel="$x_2$",
    title=f"LSVM vs LSVM-GSU on the 2-D toy set, λ = {lam}",
)
ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, fontsize=9)
plt.show()

# %%
# LSVM's line is fixed by the three means that sit on its margin and ignores the ellipses. GSU charges each
# example :math:`E[\max(0, 1 - y(w^T X + b))]`, which is positive whenever the Gaussian reaches across the
# margin, even if its mean is well outside it, and grows with the spread :math:`σ_i` along the normal
# :math:`w`. The wide positive Gaussian near :math:`(0.2, 1.4)` and the negative one near
# :math:`(-1.2, -1.1)` both spread far across LSVM's margin, so GSU tilts its line away from them (their
# means end up twice as far beyond the margin) and in exchange lets two better-localised means, near
# :math:`(0.3, 0.7)` and :math:`(-1.2, 0.6)`, come just inside its margin, where they cost little more.
# The tilt is what the uncertainty buys: LSVM trained on many samples drawn from the Gaussians converges
# to the GSU line, not to the one on the means.
