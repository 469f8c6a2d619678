"""``n_jobs``: a fit runs on at most ``n_jobs`` threads of its own (one pool per fit), and ``None`` follows
``OMP_NUM_THREADS`` (which joblib's process workers set), so parallel grid searches do not oversubscribe."""

import subprocess
import sys
import textwrap

import pytest

from usvm._checks import threads_of

# Counts the process's threads (Linux /proc) while a long fit runs, from a sampling thread.
PROBE = textwrap.dedent(
    """
    import os, threading, time, numpy as np
    from usvm import GSUClassifier, KernelSVMClassifier
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40000, 60)); y = (X[:, 0] + rng.normal(size=40000) > 0).astype(int)
    V = rng.uniform(0.1, 1.0, size=X.shape)
    count = lambda: len(os.listdir("/proc/self/task"))
    base, peak, done = count() + 1, 0, False  # + the sampler itself
    def sample():
        global peak
        while not done:
            peak = max(peak, count()); time.sleep(0.002)
    t = threading.Thread(target=sample); t.start()
    GSUClassifier(lam=1e-4, {args}).fit(X, y, X_cov=V)
    done = True; t.join()
    print(peak - base)
    """
)


def extra_threads(args: str, env: dict | None = None) -> int:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)], capture_output=True, text=True, check=True, env=env
    )
    return int(out.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads through /proc")
def test_a_fit_uses_at_most_n_jobs_threads():
    import os

    assert extra_threads("n_jobs=1") <= 1
    assert extra_threads("n_jobs=2") <= 2
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    assert extra_threads("n_jobs=None", env) <= 1


def test_threads_of():
    assert threads_of(3) == 3
    assert threads_of(-1) is None
    for bad in (0, -2, 1.5, True, "2"):
        with pytest.raises(ValueError, match="n_jobs"):
            threads_of(bad)
