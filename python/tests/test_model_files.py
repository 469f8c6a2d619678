"""Model files that cannot give finite, meaningful scores are a ModelFileError when read (issue: finite or loud):
repeated classes, a subnormal BE-SVM normalisation scale, a key given twice, malformed coefficients."""

import json

import numpy as np
import pytest

import usvm


def fitted(method):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1, -1)
    return json.loads(usvm.Classifier(method=method).fit(X, y).model_.to_json()), X


def refused(model, match):
    with pytest.raises(usvm.ModelFileError, match=match):
        usvm.Model.from_json(json.dumps(model))


def test_a_sound_model_file_reads_back():
    model, X = fitted("hinge")
    assert usvm.Model.from_json(json.dumps(model)).decision_function(X).shape[0] == len(X)


def test_repeated_or_single_classes_are_refused():
    model, _ = fitted("hinge")
    refused({**model, "classes": [1, 1]}, r"class 1 is listed twice")
    refused({**model, "classes": [1]}, r"at least 2 classes")


def test_malformed_coefficients_say_what_is_expected():
    model, _ = fitted("hinge")
    refused({**model, "coef": "abc"}, r"coef must be a list of numbers \(two classes\) or a list of such lists")
    refused({**model, "coef": [1.0, "x", 3.0]}, r'coef\[1\] is "x", not a number')


def test_a_repeated_key_is_refused():
    model, _ = fitted("hinge")
    text = json.dumps(model).replace("{", '{"method": "gsu", ', 1)
    with pytest.raises(usvm.ModelFileError, match='duplicate key "method"'):
        usvm.Model.from_json(text)


def test_a_subnormal_besvm_scale_is_refused():
    model, X = fitted("besvm")
    usvm.Model.from_json(json.dumps(model)).decision_function(X)
    model["basis_expansion"]["normalisation"][0]["scale"] = 1e-320
    refused(model, r"positive, normal scale \(found 1e-320")
