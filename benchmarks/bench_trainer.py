"""The NumPy trainer against a plain PyTorch twin, side by side in one run (CPU, float64).

Both train one softmax attention layer on the affine task (``d = 5``, ``L = 1``, ``sigma = 0.5``) with
Adam (``lr = 0.01``, betas ``(0.9, 0.999)``, ``eps = 1e-8``) on a fresh batch of ``256`` prompts per step,
for ``n = 50, 200, 1000`` and both parameterisations (``param="M"``: ``s_i = x_i^T M q``; ``param="full"``:
``W_K``, ``W_Q``, ``W_V`` on tokens ``z_i = [x_i; y_i]``, query ``[q; 0]``).

- NumPy: :func:`lipschitz_icl.model.train.train` itself (analytic gradients); seconds/step is its ``seconds``
  (the training loop only) over its ``steps``.
- PyTorch twin: the same model, the same start (the NumPy ``init_params`` draw), the same data
  distribution drawn in torch each step (``u``, ``x``, ``q`` normalised standard Gaussians,
  ``l, b ~ U[-L, L]``, ``y = l u.x + b + sigma eps``, target ``l u.q + b``) from a ``torch.Generator``
  seeded with a ``numpy.random.SeedSequence``-derived seed, the loss by autograd and
  ``torch.optim.Adam`` (defaults).  ``torch.set_num_threads`` is set to the machine's cores
  (``os.cpu_count()``); NumPy runs with its defaults.

Each cell: one warm-up run of each (not timed), then ``--repeats`` timed runs of ``--steps`` steps
(default ``max(40, 10000 // n)``), NumPy and torch alternating so both see the same machine load, each
run after a 0.2 s pause (so that neither side's idle threads still spin during the other's run); the
table reports the medians and the ratio torch / NumPy (above 1: NumPy is faster).  The NumPy trainer
draws the random part of the next batches on a worker thread (``train.prompt_stream``), so both sides
use up to the machine's cores; the machine should otherwise be idle.  Without torch the script prints
one line and exits 0.

Run: python benchmarks/bench_trainer.py [--n 50 200 1000] [--params M full] [--steps S] [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np

from lipschitz_icl import make_problem
from lipschitz_icl.model.train import DEFAULT_INIT_SCALE, init_params, train

D, L, SIGMA, BATCH, LR = 5, 1.0, 0.5, 256, 0.01
WARMUP_STEPS = 5
SETTLE_SECONDS = 0.2


# ----------------------------------------------------------------------------- the PyTorch twin
def _torch_seed(seed: int) -> int:
    """A 63-bit torch seed derived from ``SeedSequence(seed)``."""
    return int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0] >> np.uint64(1))


def _torch_sphere(torch, gen, shape):
    g = torch.randn(shape, generator=gen, dtype=torch.float64)
    return g / torch.linalg.vector_norm(g, dim=-1, keepdim=True)


def _torch_prompts(torch, gen, n: int):
    """``u``, ``l``, ``b``, ``x``, ``q``, ``y``, ``f(q)`` of the affine class, drawn in torch."""
    u = _torch_sphere(torch, gen, (BATCH, D))
    l = (2.0 * torch.rand(BATCH, generator=gen, dtype=torch.float64) - 1.0) * L
    b = (2.0 * torch.rand(BATCH, generator=gen, dtype=torch.float64) - 1.0) * L
    x = _torch_sphere(torch, gen, (BATCH, n, D))
    q = _torch_sphere(torch, gen, (BATCH, D))
    y = l[:, None] * (x @ u[:, :, None])[..., 0] + b[:, None]
    y = y + SIGMA * torch.randn((BATCH, n), generator=gen, dtype=torch.float64)
    fq = l * (q * u).sum(-1) + b
    return x, y, q, fq


def _torch_predict(torch, param: str, p: dict, x, y, q):
    if param == "M":
        s = (x @ (q @ p["M"].T)[:, :, None])[..., 0]  # s_i = x_i^T M q
        return (torch.softmax(s, dim=-1) * y).sum(-1)
    z = torch.cat([x, y[..., None]], dim=-1)  # z_i = [x_i; y_i]
    zq = torch.cat([q, torch.zeros_like(q[:, :1])], dim=-1)  # z_q = [q; 0]
    h = zq @ p["W_Q"].T
    s = (z @ (h @ p["W_K"])[:, :, None])[..., 0]  # s_i = (W_K z_i) . h
    c = z @ p["W_V"][-1]  # c_i = W_V[d] . z_i
    return (torch.softmax(s, dim=-1) * c).sum(-1)


def torch_seconds_per_step(torch, param: str, n: int, steps: int, seed: int) -> float:
    """Seconds per step of ``steps`` Adam steps of the twin (the loop only)."""
    start_params = init_params(param, D, "softmax", np.random.default_rng(seed), DEFAULT_INIT_SCALE[param])
    p = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in start_params.items()}
    opt = torch.optim.Adam(list(p.values()), lr=LR)
    gen = torch.Generator().manual_seed(_torch_seed(seed))
    start = time.perf_counter()
    for _ in range(steps):
        x, y, q, fq = _torch_prompts(torch, gen, n)
        loss = ((_torch_predict(torch, param, p, x, y, q) - fq) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return (time.perf_counter() - start) / steps


# ----------------------------------------------------------------------------- NumPy
def numpy_seconds_per_step(param: str, n: int, steps: int, seed: int) -> float:
    problem = make_problem("affine", D, n, L, SIGMA)
    result = train(problem, param=param, steps=steps, batch=BATCH, lr=LR, seed=seed, progress=False)
    return result.seconds / steps


def _settled(fn, *args):
    """``fn(*args)`` after a pause that lets the other side's threads go idle (OpenMP workers spin a
    while after a parallel region; NumPy's prompt worker is joined at the end of a run)."""
    time.sleep(SETTLE_SECONDS)
    return fn(*args)


def cell(torch, param: str, n: int, steps: int, repeats: int):
    """Median seconds/step of NumPy and torch (after one untimed warm-up run each)."""
    numpy_seconds_per_step(param, n, WARMUP_STEPS, 0)
    torch_seconds_per_step(torch, param, n, WARMUP_STEPS, 0)
    t_np, t_torch = [], []
    for r in range(repeats):
        t_np.append(_settled(numpy_seconds_per_step, param, n, steps, r + 1))
        t_torch.append(_settled(torch_seconds_per_step, torch, param, n, steps, r + 1))
    return statistics.median(t_np), statistics.median(t_torch)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[50, 200, 1000])
    parser.add_argument("--params", nargs="+", default=["M", "full"], choices=["M", "full"])
    parser.add_argument(
        "--steps",
        type=int,
        default=None,
        help="timed steps per run (default max(40, 10000 // n): a run of at least ~0.1 s)",
    )
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per cell (default 7)")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("bench_trainer: torch is not installed; skipped")
        return 0
    threads = os.cpu_count() or 1
    torch.set_num_threads(threads)
    print(
        f"# NumPy trainer vs PyTorch twin (CPU, float64): affine d = {D}, L = {L:g}, sigma = {SIGMA:g}, "
        f"batch = {BATCH}, softmax, Adam lr = {LR:g}\n"
    )
    print(
        f"numpy {np.__version__}, torch {torch.__version__} ({threads} threads), Python "
        f"{platform.python_version()}, {os.cpu_count()} cores; per cell {args.repeats} runs of each, "
        f"alternating, {args.steps or 'max(40, 10000 // n)'} steps per run, {SETTLE_SECONDS} s pause "
        f"before each run, after a {WARMUP_STEPS}-step warm-up; medians; load average before: "
        f"{os.getloadavg()[0]:.2f}\n"
    )
    print("| n | param | NumPy s/step | torch s/step | torch / NumPy |")
    print("|---|---|---|---|---|")
    for n in args.n:
        for param in args.params:
            steps = args.steps or max(40, 10000 // n)
            t_np, t_torch = cell(torch, param, n, steps, args.repeats)
            print(f"| {n} | {param} | {t_np:.2e} | {t_torch:.2e} | **{t_torch / t_np:.2f}x** |", flush=True)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
