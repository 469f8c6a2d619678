"""usvm: maximum-margin learning from uncertain data.

scikit-learn estimators over the usvm Rust core. Training examples are Gaussians ``N(x_i, Σ_i)``:
pass the means as ``X`` and the covariances as ``X_cov`` to ``fit``.

>>> import numpy as np
>>> from usvm import GSUClassifier
>>> rng = np.random.default_rng(0)
>>> X = np.vstack([rng.normal(1, 1, (20, 3)), rng.normal(-1, 1, (20, 3))])
>>> y = np.repeat([1, 0], 20)
>>> V = rng.uniform(0.1, 0.5, X.shape)   # per-feature variances (diagonal Σ_i)
>>> clf = GSUClassifier(lam=0.01).fit(X, y, X_cov=V)
>>> bool(clf.score(X, y) > 0.8)
True
"""

from ._base import (
    Classifier,
    DegenerateFitWarning,
    NoPrivilegedInformationWarning,
    default_params,
)
from ._besvm import BasisExpansion, BasisExpansionClassifier
from ._cv import BasisExpansionClassifierCV, ClassifierCV, GSUClassifierCV, GSUSquaredHingeClassifierCV
from ._estimators import GSUClassifier, LowRankCovariance
from ._kernel import KernelGSUClassifier
from ._kernel_svm import KernelSVMClassifier
from ._persist import skops_trusted_types
from ._plot import plot_angle, plot_boundary, plot_pr
from ._rescaled_hinge import RescaledHingeSVMClassifier
from ._sqhinge import GSUSquaredHingeClassifier
from ._tables import from_table, read_parquet
from ._svm_plus import L2SVMPlusClassifier, RobustSVMPlusClassifier, SVMPlusClassifier
from ._tsvc import TSVCClassifier
from ._uncertainty import (
    block_pool,
    gaussians_from_repeats,
    standard_errors_to_variances,
    translation_covariance,
    welch_pool,
)
from ._usvm import (
    METHODS,
    DataError,
    InvalidParameterError,
    Model,
    ModelFileError,
    ParamsError,
    UsvmError,
    __version__,
)

__all__ = [
    "BasisExpansion",
    "BasisExpansionClassifier",
    "BasisExpansionClassifierCV",
    "Classifier",
    "ClassifierCV",
    "DataError",
    "DegenerateFitWarning",
    "GSUClassifier",
    "GSUClassifierCV",
    "GSUSquaredHingeClassifier",
    "GSUSquaredHingeClassifierCV",
    "InvalidParameterError",
    "KernelGSUClassifier",
    "KernelSVMClassifier",
    "L2SVMPlusClassifier",
    "LowRankCovariance",
    "METHODS",
    "Model",
    "ModelFileError",
    "NoPrivilegedInformationWarning",
    "ParamsError",
    "RescaledHingeSVMClassifier",
    "RobustSVMPlusClassifier",
    "SVMPlusClassifier",
    "TSVCClassifier",
    "UsvmError",
    "__version__",
    "block_pool",
    "default_params",
    "from_table",
    "gaussians_from_repeats",
    "plot_angle",
    "plot_boundary",
    "plot_pr",
    "read_parquet",
    "skops_trusted_types",
    "standard_errors_to_variances",
    "translation_covariance",
    "welch_pool",
]
