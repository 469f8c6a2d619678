"""ONNX export of fitted usvm models.

Every fitted classifier is exported from its model file (``estimator.to_json()``, the object ``usvm
predict`` reads), so one writer covers every registry method:

- linear models (``gsu``, ``hinge``, ``iso``, ``sampling``, ``power``, ``sqhinge-gsu``, ``logistic``,
  linear TSVC): ``f = X Wᵀ + b``;
- kernel models (``svm``, ``ksvm-igsu`` exact or Nyström, kernel TSVC, ``svmplus``, ``rsvmplus``,
  ``l2svmplus``, ``rsvm-rhhq``) with linear, RBF or polynomial kernels: ``f = k(X, S) Cᵀ + b`` over the
  support vectors ``S``, the RBF kernel as ``exp(-γ max(‖x‖² + ‖s‖² − 2xᵀs, 0))`` as the core computes it;
- random-Fourier models (``ksvm-igsu`` with ``approximation="fourier"``): ``√(2/D) cos(X Ωᵀ + β)``, then
  linear;
- BE-SVM (``besvm``) with linear, RBF or polynomial similarities: the map to the basis, each measure's
  normalisation (BE-SVM's centring and scale, or Nyström's projection), then linear. The invariant
  similarities (``rigid``, ``deformable``) take a maximum over shifts of the image grid and are not exported
  (``ValueError`` naming the measure); neither is a precomputed kernel.

The graph has one input ``X`` (``[N, n_features]``, float64 by default) and two outputs: ``label`` (the
predicted class, ``classes_[f > 0]``, ``classes_[argmax f]``, or for one-vs-one kernel models the most
votes, ties to the first class) and ``scores`` (the decision values, ``[N, 1]`` for two classes, ``[N, K]``
for one-vs-rest, ``[N, K(K-1)/2]`` for one-vs-one: ``decision_function_shape='ovo'``'s values). Only
standard ONNX operators are used (opset 13).

>>> import numpy as np, onnxruntime as ort
>>> from usvm import KernelSVMClassifier
>>> from usvm.onnx import to_onnx
>>> X = np.array([[0.0, 1.0], [1.0, 2.0], [0.0, -1.0], [1.0, -2.0]])
>>> clf = KernelSVMClassifier(gamma=0.5).fit(X, [1, 1, 0, 0])
>>> session = ort.InferenceSession(to_onnx(clf).SerializeToString())
>>> label, scores = session.run(None, {"X": X})
>>> label.tolist(), bool(np.allclose(scores.ravel(), clf.decision_function(X)))
([1, 1, 0, 0], True)

:func:`register` adds converters for every usvm estimator to ``skl2onnx``, so that ``skl2onnx.to_onnx``
converts pipelines that end in a usvm classifier (for example a ``StandardScaler`` followed by a
``GSUClassifier``); give it a ``DoubleTensorType`` input for float64 scores.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Callable

import numpy as np

__all__ = ["OPSET", "register", "to_onnx"]

# The ONNX opset the graphs are written for (every operator used is unchanged since opset 13).
OPSET = 13
_INT64 = 7  # onnx.TensorProto.INT64


def _array(value: Any) -> np.ndarray:
    """A float64 array from the model file: a nested list, or ``{"v": 1, "dim": [...], "data": [...]}``."""
    if isinstance(value, dict) and "dim" in value:
        return np.asarray(value["data"], dtype=np.float64).reshape(value["dim"])
    return np.asarray(value, dtype=np.float64)


def _rows(features: dict) -> np.ndarray:
    """The dense rows of stored ``Features``: ``{"dense": [...]}``, a CSR matrix under ``"sparse"`` or
    ``"dense_nonzeros"``, or ``{"packed": ...}`` (base64 of per-row index gaps as LEB128 varints and of the
    little-endian float64 values)."""
    if "dense" in features:
        return np.atleast_2d(_array(features["dense"]))
    if "packed" in features:
        p = features["packed"]
        values = np.frombuffer(base64.b64decode(p["values"]), dtype="<f8")
        code, pos, indices = base64.b64decode(p["indices"]), 0, []
        indptr = np.asarray(p["indptr"])
        for i in range(len(indptr) - 1):
            j = 0
            for k in range(indptr[i + 1] - indptr[i]):
                step, shift = 0, 0
                while True:
                    b = code[pos]
                    pos += 1
                    step |= (b & 0x7F) << shift
                    shift += 7
                    if b < 0x80:
                        break
                j = step if k == 0 else j + step
                indices.append(j)
        csr = {"n_cols": p["n_cols"], "indptr": indptr, "indices": indices, "values": values}
    else:
        csr = features["sparse"] if "sparse" in features else features["dense_nonzeros"]
    indptr = np.asarray(csr["indptr"])
    out = np.zeros((len(indptr) - 1, csr["n_cols"]))
    for i in range(len(indptr) - 1):
        lo, hi = indptr[i], indptr[i + 1]
        out[i, np.asarray(csr["indices"][lo:hi], dtype=np.intp)] = csr["values"][lo:hi]
    return out


def _pairs(k: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(k) for b in range(a + 1, k)]


def _coef(model: dict) -> np.ndarray:
    """The coefficients, one row per output: a one-vs-one kernel model's rows per pair of classes from
    LIBSVM's ``sv_coef`` layout (a vector of class c holds its coefficient with class o in row o, or o - 1
    when o > c)."""
    coef = np.atleast_2d(_array(model["coef"]))
    if model.get("multiclass") != "ovo":
        return coef
    k = len(model["classes"])
    sv_class = np.repeat(np.arange(k), model["n_support"])
    pairwise = np.zeros((k * (k - 1) // 2, coef.shape[1]))
    for p, (a, b) in enumerate(_pairs(k)):
        for c, o in ((a, b), (b, a)):
            mine = sv_class == c
            pairwise[p, mine] = coef[o if o < c else o - 1, mine]
    return pairwise


class _Graph:
    """Emits nodes and constants through two callbacks, so one writer serves the plain ONNX builder and
    skl2onnx's container."""

    def __init__(
        self,
        node: Callable[[str, list[str], str, dict[str, Any]], None],
        constant: Callable[[str, np.ndarray], str],
        fresh: Callable[[str], str],
        dtype: type,
    ) -> None:
        self._node, self._constant, self.fresh, self.dtype = node, constant, fresh, dtype

    def const(self, name: str, value: Any, dtype: Any = None) -> str:
        return self._constant(self.fresh(name), np.asarray(value, dtype=dtype or self.dtype))

    def op(self, op_type: str, *inputs: str, out: str | None = None, **attrs: Any) -> str:
        output = out or self.fresh(op_type.lower())
        self._node(op_type, list(inputs), output, attrs)
        return output


def _kernel(g: _Graph, x: str, rows: np.ndarray, kernel: dict) -> str:
    """``k(X, rows)`` as an ``[N, len(rows)]`` tensor."""
    kind = kernel.get("type")
    xs = g.op("MatMul", x, g.const("rows_t", rows.T))
    if kind == "linear":
        return xs
    if kind == "rbf":
        # ‖x‖² by a product with ones (no reduction operator whose signature changed across opsets).
        xx = g.op("MatMul", g.op("Mul", x, x), g.const("ones", np.ones((rows.shape[1], 1))))
        ss = g.const("row_norms", (rows * rows).sum(axis=1)[None, :])
        d2 = g.op("Sub", g.op("Add", xx, ss), g.op("Mul", xs, g.const("two", 2.0)))
        d2 = g.op("Max", d2, g.const("zero", 0.0))
        return g.op("Exp", g.op("Mul", d2, g.const("minus_gamma", -float(kernel["gamma"]))))
    if kind == "polynomial":
        base = g.op(
            "Add",
            g.op("Mul", xs, g.const("gamma", float(kernel["gamma"]))),
            g.const("coef0", kernel["coef0"]),
        )
        return g.op("Pow", base, g.const("degree", float(kernel["degree"])))
    raise ValueError(f"a {kind} kernel cannot be exported to ONNX (it is not a function of the input rows)")


def _features(g: _Graph, x: str, model: dict) -> str:
    """The tensor the model's linear part acts on: ``X`` itself, its kernel columns or its feature map."""
    if "support_vectors" in model:
        return _kernel(g, x, _rows(model["support_vectors"]), model["kernel"])
    if "feature_map" in model:
        fmap = model["feature_map"]
        if fmap["type"] == "fourier":
            omega, offset = _array(fmap["omega"]), _array(fmap["offset"])
            cos = g.op(
                "Cos", g.op("Add", g.op("MatMul", x, g.const("omega_t", omega.T)), g.const("offset", offset))
            )
            return g.op("Mul", cos, g.const("scale", np.sqrt(2.0 / len(offset))))
        if fmap["type"] == "nystroem":
            k = _kernel(g, x, _rows(fmap["landmarks"]), fmap["kernel"])
            return g.op("MatMul", k, g.const("projection", _array(fmap["projection"])))
        raise ValueError(f"feature map {fmap['type']!r} cannot be exported to ONNX")
    if "basis_expansion" in model:
        return _basis_expansion(g, x, model["basis_expansion"])
    return x


def _basis_expansion(g: _Graph, x: str, expansion: dict) -> str:
    """BE-SVM's map: per measure, the similarities to the basis and their normalisation, concatenated."""
    basis = _rows(expansion["basis"])
    blocks = []
    for measure, norm in zip(expansion["measures"], expansion["normalisation"]):
        if measure["type"] not in ("linear", "rbf", "polynomial"):
            raise ValueError(
                f"the {measure['type']} similarity (a maximum over shifts of the image grid) cannot be "
                "exported to ONNX; linear, rbf and polynomial similarities can"
            )
        raw = _kernel(g, x, basis, measure)
        if norm["type"] == "centred":
            centred = g.op("Sub", raw, g.const("mean", _array(norm["mean"])))
            blocks.append(g.op("Div", centred, g.const("scale", norm["scale"])))
        elif norm["type"] == "nystroem":
            blocks.append(g.op("MatMul", raw, g.const("projection_t", _array(norm["projection"]).T)))
        else:
            raise ValueError(f"normalisation {norm['type']!r} cannot be exported to ONNX")
    return blocks[0] if len(blocks) == 1 else g.op("Concat", *blocks, axis=1)


def _write(g: _Graph, x: str, model: dict, classes: np.ndarray, label: str, scores: str, ovr_shape: bool) -> None:
    """Nodes from input ``x`` to outputs ``label`` and ``scores`` for one model file; a one-vs-one model's
    scores one per class (scikit-learn's transform) when ``ovr_shape``, else one per pair."""
    coef = _coef(model)
    intercept = np.atleast_1d(_array(model["intercept"]))
    phi = _features(g, x, model)
    one_vs_one = model.get("multiclass") == "ovo" and len(classes) > 2
    f = g.op("MatMul", phi, g.const("coef_t", coef.T))
    f = g.op("Add", f, g.const("intercept", intercept), out=None if one_vs_one and ovr_shape else scores)
    if coef.shape[0] == 1:
        positive = g.op("Greater", f, g.const("zero", 0.0))
        index = g.op("Reshape", g.op("Cast", positive, to=_INT64), g.const("flat", [-1], np.int64))
    elif one_vs_one:
        k = len(classes)
        first, second = np.zeros((len(coef), k)), np.zeros((len(coef), k))
        for p, (a, b) in enumerate(_pairs(k)):
            first[p, a], second[p, b] = 1.0, 1.0
        first_c, second_c, one = g.const("first", first), g.const("second", second), g.const("one", 1.0)

        def votes(first_wins: str) -> str:
            won = g.op("Cast", first_wins, to=_elem_type(g.dtype))
            return g.op("Add", g.op("MatMul", won, first_c), g.op("MatMul", g.op("Sub", one, won), second_c))

        # LIBSVM's votes (f > 0 for the pair's first class); ArgMax takes the first maximum, LIBSVM's tie rule.
        index = g.op("ArgMax", votes(g.op("Greater", f, g.const("zero", 0.0))), axis=1, keepdims=0)
        if ovr_shape:
            # scikit-learn's votes (f < 0 for the second class) plus s / (3(|s| + 1)), s the summed confidences.
            sk_votes = votes(g.op("Not", g.op("Less", f, g.const("zero", 0.0))))
            s = g.op("MatMul", f, g.const("signs", first - second))
            three = g.const("three", 3.0)
            bounded = g.op("Div", s, g.op("Mul", three, g.op("Add", g.op("Abs", s), one)))
            g.op("Add", sk_votes, bounded, out=scores)
    else:
        index = g.op("ArgMax", f, axis=1, keepdims=0)
    g.op("Gather", g.const("classes", classes, classes.dtype), index, out=label, axis=0)


def _scores_per_class(estimator: Any) -> bool:
    """Whether a one-vs-one model's scores are exported one per class (``decision_function_shape``)."""
    return getattr(estimator, "decision_function_shape", "ovr") == "ovr"


def _n_scores(estimator: Any, model: dict) -> int:
    if model.get("multiclass") == "ovo" and len(model["classes"]) > 2 and _scores_per_class(estimator):
        return len(model["classes"])
    return _coef(model).shape[0]


def _model_and_classes(estimator: Any) -> tuple[dict, np.ndarray]:
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator, "model_")
    model = json.loads(estimator.model_.to_json())
    classes = np.asarray(estimator.classes_)
    if classes.dtype.kind in "iub":
        classes = classes.astype(np.int64)
    elif classes.dtype.kind == "f":
        classes = classes.astype(np.float64)
    elif classes.dtype.kind in "UO":
        classes = classes.astype(str).astype(object)
    else:
        raise ValueError(f"class labels of dtype {classes.dtype} cannot be exported to ONNX")
    return model, classes


def _elem_type(dtype: Any) -> int:
    from onnx import TensorProto, helper

    if np.dtype(dtype) == object:
        return TensorProto.STRING
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def to_onnx(estimator: Any, dtype: Any = np.float64, name: str | None = None) -> Any:
    """The ONNX model (``onnx.ModelProto``) of a fitted usvm classifier: input ``X`` (``[N, n_features]``
    of ``dtype``, float64 or float32), outputs ``label`` and ``scores`` (module docs). Raises
    ``ValueError`` for what ONNX cannot express (invariant similarities, precomputed kernels)."""
    from onnx import checker, helper, numpy_helper

    dtype = np.dtype(dtype)
    if dtype not in (np.float64, np.float32):
        raise ValueError(f"dtype must be float64 or float32, not {dtype}")
    model, classes = _model_and_classes(estimator)
    nodes: list[Any] = []
    inits: list[Any] = []
    used: set[str] = set()

    def fresh(base: str) -> str:
        k = 0
        while f"{base}_{k}" in used:
            k += 1
        used.add(f"{base}_{k}")
        return f"{base}_{k}"

    def node(op_type: str, inputs: list[str], output: str, attrs: dict[str, Any]) -> None:
        nodes.append(helper.make_node(op_type, inputs, [output], name=fresh(f"n_{op_type}"), **attrs))

    def constant(cname: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(value, cname))
        return cname

    g = _Graph(node, constant, fresh, dtype.type)
    d = int(model["n_features"])
    _write(g, "X", model, classes, "label", "scores", _scores_per_class(estimator))
    n_out = _n_scores(estimator, model)
    graph = helper.make_graph(
        nodes,
        name or f"usvm_{model['method']}",
        [helper.make_tensor_value_info("X", _elem_type(dtype), [None, d])],
        [
            helper.make_tensor_value_info("label", _elem_type(classes.dtype), [None]),
            helper.make_tensor_value_info("scores", _elem_type(dtype), [None, n_out]),
        ],
        inits,
    )
    onnx_model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="usvm",
        doc_string=model["method"],
    )
    onnx_model.ir_version = min(onnx_model.ir_version, 8)  # readable by onnxruntime ≥ 1.10
    checker.check_model(onnx_model)
    return onnx_model


def register() -> None:
    """Registers a ``skl2onnx`` converter for every usvm classifier (idempotent). Outputs ``label`` and
    ``scores`` as in :func:`to_onnx`; the scores take the input's element type (use a
    ``DoubleTensorType`` input for float64)."""
    from skl2onnx import update_registered_converter
    from skl2onnx.common.data_types import DoubleTensorType, Int64TensorType, StringTensorType

    from ._base import RegistryClassifier

    def label_type(estimator: Any) -> Any:
        kind = np.asarray(estimator.classes_).dtype.kind
        return (
            Int64TensorType([None])
            if kind in "iub"
            else DoubleTensorType([None])
            if kind == "f"
            else (StringTensorType([None]))
        )

    def parser(scope: Any, estimator: Any, inputs: list[Any], custom_parsers: Any = None) -> list[Any]:
        op = scope.declare_local_operator(_alias(type(estimator)), estimator)
        op.inputs = inputs
        op.outputs.append(scope.declare_local_variable("label", label_type(estimator)))
        op.outputs.append(scope.declare_local_variable("scores", inputs[0].type.__class__()))
        return list(op.outputs)

    def shapes(operator: Any) -> None:
        estimator = operator.raw_operator
        n = operator.inputs[0].get_first_dimension()
        outputs = _n_scores(estimator, json.loads(estimator.model_.to_json()))
        operator.outputs[0].type = label_type(estimator).__class__([n])
        operator.outputs[1].type = operator.inputs[0].type.__class__([n, outputs])

    def converter(scope: Any, operator: Any, container: Any) -> None:
        is_double = isinstance(operator.inputs[0].type, DoubleTensorType)
        dtype = np.float64 if is_double else np.float32
        model, classes = _model_and_classes(operator.raw_operator)

        def node(op_type: str, inputs: list[str], output: str, attrs: dict[str, Any]) -> None:
            container.add_node(op_type, inputs, output, name=scope.get_unique_operator_name(op_type), **attrs)

        def constant(cname: str, value: np.ndarray) -> str:
            container.add_initializer(
                cname, _elem_type(value.dtype), list(value.shape), value.ravel().tolist()
            )
            return cname

        g = _Graph(node, constant, scope.get_unique_variable_name, dtype)
        _write(
            g,
            operator.inputs[0].full_name,
            model,
            classes,
            operator.outputs[0].full_name,
            operator.outputs[1].full_name,
            _scores_per_class(operator.raw_operator),
        )

    for cls in _subclasses(RegistryClassifier):
        update_registered_converter(cls, _alias(cls), shapes, converter, parser=parser)


def _alias(cls: type) -> str:
    return f"Usvm{cls.__name__}"


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out
