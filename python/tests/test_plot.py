"""usvm.plot_boundary / plot_pr / plot_angle: rendered by the Rust usvm-plot crate."""

import struct

import numpy as np
import pytest

import usvm
from usvm import GSUClassifier


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def toy():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(1.2, 0.7, (6, 2)), rng.normal(-1.2, 0.7, (6, 2))])
    y = np.repeat([1, 0], 6)
    A = rng.normal(0, 0.5, (12, 2, 2))
    cov = A @ A.transpose(0, 2, 1)
    return X, y, cov


def test_boundary_png_and_svg(toy, tmp_path):
    X, y, cov = toy
    gsu = GSUClassifier(lam=0.05).fit(X, y, X_cov=cov)
    hinge = GSUClassifier(method="hinge", lam=0.05).fit(X, y)
    path = tmp_path / "b.png"
    data = usvm.plot_boundary(X, y, X_cov=cov, classifiers=[hinge, gsu], path=path, width=640, height=480)
    assert path.read_bytes() == data
    assert png_size(data) == (640, 480)
    assert len(set(data)) > 50  # compressed image data, not a blank canvas header only
    svg = usvm.plot_boundary(X, y, X_cov=np.full((12, 2), 0.1), classifiers=[gsu, ((1.0, 1.0), 0.0)],
                             labels=["LSVM-GSU"], format="svg").decode()
    assert svg.startswith("<svg") and "\nLSVM-GSU\n" in svg and "\nline 2\n" in svg
    assert svg.count("<polyline") >= 14  # 12 ellipses and 2 lines
    assert not list(tmp_path.glob("*.tmp"))


def test_boundary_validation(toy, tmp_path):
    X, y, cov = toy
    with pytest.raises(ValueError, match="shape \\(n, 2\\)"):
        usvm.plot_boundary(np.zeros((3, 3)), [0, 1, 1])
    with pytest.raises(ValueError, match="at most 2 classes"):
        usvm.plot_boundary(X, np.arange(12) % 3)
    with pytest.raises(ValueError, match="unknown plot format"):
        usvm.plot_boundary(X, y, path=tmp_path / "b.pdf")
    bad = cov.copy()
    bad[0] = [[1.0, 2.0], [2.0, 1.0]]
    with pytest.raises(ValueError, match="positive semi-definite"):
        usvm.plot_boundary(X, y, X_cov=bad, path=tmp_path / "b.png")
    with pytest.raises(ValueError, match="invalid width"):
        usvm.plot_boundary(X, y, width=10)
    multi = GSUClassifier(lam=0.05).fit(X, np.arange(12) % 3)
    with pytest.raises(ValueError, match="binary"):
        usvm.plot_boundary(X, y, classifiers=[multi])
    assert not list(tmp_path.iterdir())


def test_pr_curves(tmp_path):
    y = np.array([0, 1, 1, 0, 1, 0, 0, 1])
    s1 = np.array([-0.5, 0.9, 0.3, 0.2, 0.8, -1.0, 0.1, 0.4])
    path = tmp_path / "pr.svg"
    svg = usvm.plot_pr(y, {"a": s1, "b": -s1}, path=path).decode()
    assert path.read_text() == svg
    assert "\na (AP 1.000)\n" in svg and "\nRecall\n" in svg
    png = usvm.plot_pr(y, [s1, s1[::-1]], labels=["x", "y"], width=300, height=200)
    assert png_size(png) == (300, 200)
    assert png_size(usvm.plot_pr(y, s1)) == (800, 600)
    with pytest.raises(ValueError, match="no positive example"):
        usvm.plot_pr(y, s1, pos_label=7)
    with pytest.raises(ValueError, match="7 values for 8 labels"):
        usvm.plot_pr(y, s1[:7])


def test_angle_plot():
    n = np.array([10, 100, 1000])
    svg = usvm.plot_angle({"2-D": (n, 10 / np.sqrt(n))}, references=[("thesis", 1000, 1.7)], format="svg").decode()
    assert "\n2-D\n" in svg and "\nthesis\n" in svg
    with pytest.raises(ValueError, match="log axis"):
        usvm.plot_angle({"2-D": ([0, 10], [1, 2])})
