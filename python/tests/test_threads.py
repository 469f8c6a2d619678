"""``n_jobs``: a fit runs on at most ``n_jobs`` threads of its own (a pool kept for the next fit from the same
thread, never one from before a fork), and ``None`` follows ``OMP_NUM_THREADS`` (which joblib's process workers
set), so parallel grid searches do not oversubscribe."""

import os
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


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_fits_on_a_pool_of_its_own():
    """The parent's fit keeps its pool for its next fit; a child forked after it has none of that pool's
    threads, and must not wait for them."""
    script = textwrap.dedent(
        """
        import multiprocessing as mp, numpy as np
        from usvm import GSUClassifier
        X = np.random.default_rng(0).normal(size=(200, 5)); y = (X[:, 0] > 0).astype(int)
        fit = lambda: GSUClassifier(method="hinge", n_jobs=1).fit(X, y).coef_.tolist()
        before = fit()
        def child(q): q.put(fit())
        ctx = mp.get_context("fork"); q = ctx.Queue(); p = ctx.Process(target=child, args=(q,)); p.start()
        in_child = q.get(timeout=60); p.join(60)
        print(in_child == before == fit())
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=180)
    assert out.stdout.strip() == "True", out.stderr


def test_threads_of():
    assert threads_of(3) == 3
    assert threads_of(-1) is None
    for bad in (0, -2, 1.5, True, "2"):
        with pytest.raises(ValueError, match="n_jobs"):
            threads_of(bad)
