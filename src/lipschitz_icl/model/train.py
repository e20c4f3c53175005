"""The NumPy trainer: online pretraining of one attention layer on the ICL loss, analytic gradients.

Every step draws a fresh batch of ``B`` prompts from the problem (``problem.sample_prompts``; see
:func:`run_prompt_stream`: the draws of the next batches run on worker threads while the current batch is
used, the same draws in the same order as a serial loop), computes the ICL loss (README "Conventions")
on it,

    loss = (1/B) sum_b (yhat_b - f_b(q_b))^2          (target: the noiseless label at the query),

and its exact gradient (formulas below, no autodiff), and takes one Adam or SGD step.  All arithmetic is
float64; the whole run (initialisation and data) draws from one ``numpy.random.Generator`` built from the
seed -- and, for a batch of at least :data:`SPLIT_ENTRIES` context coordinates, its second half-batches from
a second Generator seeded from the first, so that two threads draw a batch -- so a run is reproducible bit
for bit.  Independent runs train side by side (:func:`train_runs`), each with the numbers of a lone run.

Two parameterisations (the conventions of :mod:`lipschitz_icl.model.attention`):

``"M"`` (Eq. (4) form)
    softmax:  ``yhat = sum_i y_i p_i``, ``p = softmax(s)``, ``s_i = x_i^T M q``;
    linear:   ``yhat = (v/n) sum_i y_i x_i^T M q`` with a trained scalar value weight ``v``.
    Parameters ``{"M"}`` (softmax) or ``{"M", "v"}`` (linear).
``"full"`` (one layer on tokens ``z_i = [x_i; y_i]``, query token ``z_q = [q; 0]``)
    ``s_i = z_i^T W_K^T W_Q z_q``, ``a = softmax(s)`` or ``a = s/n``, ``yhat = (sum_i a_i W_V z_i)[d]``.
    Parameters ``{"W_K", "W_Q", "W_V"}``, each ``(d+1) x (d+1)``.

Gradients, with ``e_b = 2 (yhat_b - f_b(q_b)) / B`` (the derivative of the loss in ``yhat_b``):

- M-form softmax: ``dyhat/ds_i = p_i (y_i - yhat)``, so
  ``grad_M = sum_b e_b sum_i p_bi (y_bi - yhat_b) x_bi q_b^T``.
- M-form linear, ``g_b = (1/n) sum_i y_bi x_bi``, ``yhat_b = v g_b^T M q_b``:
  ``grad_M = v sum_b e_b g_b q_b^T``, ``grad_v = sum_b e_b g_b^T M q_b``.
- full layer, ``c_i = W_V[d] . z_i``, ``h = W_Q z_q``; ``dyhat/ds_i = g_i = a_i (c_i - yhat)`` (softmax) or
  ``c_i / n`` (linear); ``u = sum_i g_i z_i``:
  ``grad_{W_V[d]} = sum_b e_b sum_i a_bi z_bi`` (other rows of ``W_V`` never reach ``yhat``: zero),
  ``grad_{W_K} = sum_b e_b h_b u_b^T``, ``grad_{W_Q} = sum_b e_b W_K u_b z_qb^T``.
  Since ``z_q[d] = 0`` the last column of ``W_Q`` has zero gradient: it never reaches the prediction.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from lipschitz_icl import budget as budgets
from lipschitz_icl.estimate import Estimate
from lipschitz_icl.model import geometry
from lipschitz_icl.model.attention import ATTENTION_KINDS, Attention, AttentionLayer, softmax_weights_from_logits
from lipschitz_icl.problem import Problem, PromptBuffers
from lipschitz_icl.progress import bar as progress_bar
from lipschitz_icl.validation import ParameterError, check_choice, check_int, check_real, check_rng

__all__ = [
    "PARAMETERISATIONS",
    "OPTIMIZERS",
    "SCHEDULES",
    "Adam",
    "SGD",
    "TrainResult",
    "init_params",
    "predict",
    "loss_and_grad",
    "m_form_loss_and_grad",
    "full_layer_loss_and_grad",
    "icl_loss",
    "effective_M",
    "train",
    "train_runs",
    "Protocol",
    "prompt_stream",
    "run_prompt_stream",
    "RunBuffers",
]

PARAMETERISATIONS = ("M", "full")
OPTIMIZERS = ("adam", "sgd")
SCHEDULES = ("constant", "cosine", "step", "inverse")

Params = dict  # name -> float64 array (scalars as 0-d arrays)

# Default scale of the random start (see :func:`init_params`).  For the full layer, scale 1 left about
# one run in twelve (affine, d = 2, n = 20) at a spurious stationary point whose value row reads the
# covariates and whose scores read the labels (loss about 4x the optimum); scale 0.5 has not.
DEFAULT_INIT_SCALE = {"M": 1.0, "full": 0.5}

# Largest prompt batch held in memory at once, in float64 entries ``batch * n * (d + 1)`` (400 MB).
MAX_BATCH_ELEMENTS = 50_000_000
MAX_STEPS = 10**6  # optimiser steps per run (about a day at the default batch)
# the work budget's cost model (lipschitz_icl.budget): seconds per step and prompt coordinate, batch * n * (d + 1)
# per step, on the project machine (either form, either attention; an upper envelope of benchmarks/bench_budget.py)
SECONDS_PER_STEP_COORDINATE = 60e-9
LONG_RUN_PROMPTS = 200_000  # progress=None draws a bar (on a terminal) from steps * batch prompts
MAX_LR = 1000.0  # SGD on the M-form uses lr up to 25 (pretraining protocol); 1e300 left w_trained at 6e300


# --------------------------------------------------------------------------- forward and gradient
# Every array may carry leading run axes before the batch axis (``x`` of shape ``(..., B, n, d)``, ``M`` of
# shape ``(..., d, d)``, a scalar ``v`` of shape ``(...)``): independent runs trained side by side
# (:func:`train_runs`) are one stack, each run's numbers computed by the same operations as a lone run's.
def _transpose(a: np.ndarray) -> np.ndarray:
    """``a^T`` of the last two axes."""
    return np.swapaxes(a, -1, -2)


def _m_form_forward(params: Params, x, y, q, kind: str):
    M = params["M"]
    if kind == "softmax":
        s = (x @ (q @ _transpose(M))[..., None])[..., 0]  # s_i = x_i^T M q
        p = softmax_weights_from_logits(s)
        return np.einsum("...n,...n->...", p, y), p
    g = (y[..., None, :] @ x)[..., 0, :] / x.shape[-2]  # g = (1/n) sum_i y_i x_i
    return params["v"][..., None] * np.einsum("...d,...d->...", g, q @ _transpose(M)), g


def _batch_loss(r):
    """``(1/B) sum_b r_b^2`` per run (a float for one run)."""
    loss = np.mean(r * r, axis=-1)
    return float(loss) if loss.ndim == 0 else loss


def m_form_loss_and_grad(params: Params, x, y, q, fq, kind: str = "softmax"):
    """Batch ICL loss ``(1/B) sum_b (yhat_b - f(q_b))^2`` of the M-form and its gradient.

    softmax: ``grad_M = sum_b e_b sum_i p_bi (y_bi - yhat_b) x_bi q_b^T``;
    linear: ``grad_M = v sum_b e_b g_b q_b^T``, ``grad_v = sum_b e_b g_b^T M q_b``,
    with ``e_b = 2 (yhat_b - f(q_b)) / B`` and ``g_b = (1/n) sum_i y_bi x_bi``.
    Returns ``(loss, grads)`` with ``grads`` keyed like ``params`` (with leading run axes: the loss of
    each run, an array).
    """
    yhat, aux = _m_form_forward(params, x, y, q, kind)
    r = yhat - fq
    e = 2.0 * r / r.shape[-1]
    if kind == "softmax":
        p = aux
        coef = e[..., None] * p * (y - yhat[..., None])  # e_b p_i (y_i - yhat)
        grad_M = _transpose((coef[..., None, :] @ x)[..., 0, :]) @ q  # sum_b (sum_i coef_bi x_bi) q_b^T
        return _batch_loss(r), {"M": grad_M}
    g = aux
    v = params["v"]
    grad_M = v[..., None, None] * (_transpose(e[..., None] * g) @ q)
    grad_v = np.einsum("...b,...bd,...bd->...", e, g, q @ _transpose(params["M"]))
    return _batch_loss(r), {"M": grad_M, "v": np.asarray(grad_v)}


def _tokens(x, y, q):
    z = np.concatenate([x, y[..., None]], axis=-1)  # z_i = [x_i; y_i]
    zq = np.concatenate([q, np.zeros(q.shape[:-1] + (1,))], axis=-1)  # z_q = [q; 0]
    return z, zq


def _full_forward(params: Params, x, y, q, kind: str):
    W_K, W_Q, W_V = params["W_K"], params["W_Q"], params["W_V"]
    z, zq = _tokens(x, y, q)
    h = zq @ _transpose(W_Q)  # h = W_Q z_q
    s = (z @ (h @ W_K)[..., None])[..., 0]  # s_i = (W_K z_i) . h
    a = softmax_weights_from_logits(s) if kind == "softmax" else s / x.shape[-2]
    c = (z @ W_V[..., None, -1, :, None])[..., 0]  # c_i = W_V[d] . z_i
    return np.einsum("...n,...n->...", a, c), (z, zq, h, a, c)


def full_layer_loss_and_grad(params: Params, x, y, q, fq, kind: str = "softmax"):
    """Batch ICL loss of the full layer ``(W_K, W_Q, W_V)`` and its gradient.

    ``grad_{W_V[d]} = sum_b e_b sum_i a_bi z_bi`` (other rows zero), ``grad_{W_K} = sum_b e_b h_b u_b^T``,
    ``grad_{W_Q} = sum_b e_b W_K u_b z_qb^T`` with ``h = W_Q z_q``, ``u = sum_i g_i z_i``,
    ``g_i = a_i (c_i - yhat)`` (softmax) or ``c_i / n`` (linear), ``c_i = W_V[d] . z_i``,
    ``e_b = 2 (yhat_b - f(q_b)) / B``.  Returns ``(loss, grads)`` (leading run axes as in
    :func:`m_form_loss_and_grad`).
    """
    yhat, (z, zq, h, a, c) = _full_forward(params, x, y, q, kind)
    r = yhat - fq
    e = 2.0 * r / r.shape[-1]
    if kind == "softmax":
        g = a * (c - yhat[..., None])
    else:
        g = c / x.shape[-2]
    u = (g[..., None, :] @ z)[..., 0, :]  # u_b = sum_i g_bi z_bi
    grad_V = np.zeros_like(params["W_V"])
    grad_V[..., -1, :] = (e[..., None, :] @ (a[..., None, :] @ z)[..., 0, :])[..., 0, :]
    eu = e[..., None] * u
    grad_K = _transpose(h) @ eu
    grad_Q = params["W_K"] @ (_transpose(eu) @ zq)
    return _batch_loss(r), {"W_K": grad_K, "W_Q": grad_Q, "W_V": grad_V}


def loss_and_grad(param: str, params: Params, x, y, q, fq, *, kind: str = "softmax"):
    """Batch ICL loss and its gradient: :func:`m_form_loss_and_grad` (``param="M"``) or
    :func:`full_layer_loss_and_grad` (``param="full"``).

    ``params`` are the layer's parameters (keyed like :func:`init_params`); ``x`` the context inputs
    (``B x n x d``), ``y`` their labels (``B x n``), ``q`` the queries (``B x d``) and ``fq`` the noiseless
    target ``f(q)`` (``B``), each with the same leading run axes; ``kind`` the attention (``"softmax"`` or
    ``"linear"``). Returns ``(loss, grads)``.
    """
    if param == "M":
        return m_form_loss_and_grad(params, x, y, q, fq, kind)
    return full_layer_loss_and_grad(params, x, y, q, fq, kind)


def predict(param: str, params: Params, x, y, q, kind: str = "softmax") -> np.ndarray:
    """``yhat`` at the query for each prompt of the batch (formulas in the module docstring)."""
    if param == "M":
        return _m_form_forward(params, x, y, q, kind)[0]
    return _full_forward(params, x, y, q, kind)[0]


def icl_loss(
    problem: Problem, param: str, params: Params, rng, *, kind: str = "softmax", prompts: int = 20000, chunk: int = 5000
) -> Estimate:
    """Monte Carlo ICL loss ``E (yhat - f(q))^2`` on ``prompts`` fresh prompts, with its standard error
    (the sample mean of i.i.d. squared errors; used for the held-out loss of a trained layer)."""
    rng = check_rng(rng)
    prompts = check_int("prompts", prompts, minimum=2)
    chunk = max(1, min(chunk, MAX_BATCH_ELEMENTS // (problem.n * (problem.d + 1))))
    errors = []
    done = 0
    while done < prompts:
        m = min(chunk, prompts - done)
        _, x, y, q, fq = problem.sample_prompts(rng, m)
        errors.append((predict(param, params, x, y, q, kind) - fq) ** 2)
        done += m
    return Estimate.from_samples(np.concatenate(errors))


# --------------------------------------------------------------------------- initialisation
def init_params(param: str, d: int, kind: str, rng: np.random.Generator, scale: float = 1.0) -> Params:
    """Random anisotropic start: i.i.d. ``N(0, scale^2 / d)`` entries.

    M-form: ``M`` (``d x d``); linear attention adds ``v = 1``.  Full layer: ``W_K``, ``W_Q``, ``W_V``
    (``(d+1) x (d+1)``) with ``N(0, scale^2 / (d+1))`` entries, except ``W_V[d, d] = 1`` so that the
    prediction starts by reading the label (its sign is otherwise a coin flip that only slows training).
    """
    if param == "M":
        params = {"M": scale * rng.standard_normal((d, d)) / np.sqrt(d)}
        if kind == "linear":
            params["v"] = np.asarray(1.0)
        return params
    D = d + 1
    params = {name: scale * rng.standard_normal((D, D)) / np.sqrt(D) for name in ("W_K", "W_Q", "W_V")}
    params["W_V"][d, d] = 1.0
    return params


def _check_init(init, param: str, d: int, kind: str) -> Params:
    names = (("M", "v") if kind == "linear" else ("M",)) if param == "M" else ("W_K", "W_Q", "W_V")
    shapes = {"M": (d, d), "v": (), "W_K": (d + 1, d + 1), "W_Q": (d + 1, d + 1), "W_V": (d + 1, d + 1)}
    if not isinstance(init, dict) or set(init) != set(names):
        raise ParameterError("init", f"a dict with keys {', '.join(names)}", init)
    out = {}
    for name in names:
        value = np.array(init[name], dtype=np.float64)
        if value.shape != shapes[name] or not np.all(np.isfinite(value)):
            raise ParameterError(
                f"init[{name!r}]", f"a finite array of shape {shapes[name]}", f"array of shape {value.shape}"
            )
        out[name] = value
    return out


# --------------------------------------------------------------------------- optimisers
@dataclass
class SGD:
    """Plain SGD: ``theta <- theta - lr_t grad``."""

    def step(self, params: Params, grads: Params, lr: float) -> None:
        for name, g in grads.items():
            params[name] = params[name] - lr * g


@dataclass
class Adam:
    """Adam (Kingma & Ba): ``m <- b1 m + (1-b1) g``, ``s <- b2 s + (1-b2) g^2``,
    ``theta <- theta - lr_t (m / (1 - b1^t)) / (sqrt(s / (1 - b2^t)) + eps)``."""

    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    t: int = 0
    m: dict = field(default_factory=dict)
    s: dict = field(default_factory=dict)

    def step(self, params: Params, grads: Params, lr: float) -> None:
        self.t += 1
        c1 = 1.0 - self.beta1**self.t
        c2 = 1.0 - self.beta2**self.t
        for name, g in grads.items():
            m = self.m.get(name, 0.0) * self.beta1 + (1.0 - self.beta1) * g
            s = self.s.get(name, 0.0) * self.beta2 + (1.0 - self.beta2) * g * g
            self.m[name], self.s[name] = m, s
            params[name] = params[name] - lr * (m / c1) / (np.sqrt(s / c2) + self.eps)


def _learning_rate(lr: float, schedule: str, step: int, steps: int, final_fraction: float, switch: int) -> float:
    """constant: ``lr``; cosine: ``lr (f + (1 - f)(1 + cos(pi t / T)) / 2)`` from ``lr`` down to ``f lr``;
    step: ``lr`` for ``t < switch``, then ``f lr`` (burn-in fast, then average with a small step);
    inverse: ``lr t0 / (t0 + t)`` with ``t0 = f T / (1 - f)``, so that the last step has ``f lr``
    (the Robbins-Monro ``1/t`` decay: bias and variance of the iterate both fall like ``1/t``)."""
    if schedule == "constant":
        return lr
    if schedule == "inverse":
        t0 = final_fraction * steps / (1.0 - final_fraction) if final_fraction < 1.0 else np.inf
        return lr if not np.isfinite(t0) else lr * t0 / (t0 + step)
    if schedule == "step":
        return lr if step < switch else lr * final_fraction
    return lr * (final_fraction + (1.0 - final_fraction) * 0.5 * (1.0 + np.cos(np.pi * step / steps)))


# --------------------------------------------------------------------------- result
def effective_M(param: str, params: Params, kind: str) -> np.ndarray:
    """The ``M`` of the equivalent Eq. (4) predictor with unit value weight.

    M-form softmax: ``M``.  M-form linear: ``v M`` (only the product reaches the prediction).
    Full layer: ``A_xx = (W_K^T W_Q)[:d, :d]`` (softmax: the value weight ``W_V[d, d]`` scales the output,
    not the exponent, so it is not folded in); linear attention: ``W_V[d, d] A_xx``, which is exactly
    the linear predictor when ``W_V[d, :d] = 0`` and ``A[d, :d] = 0`` (Lemma B.1, Eq. (4)).
    """
    if param == "M":
        return params["M"] * (float(params["v"]) if kind == "linear" else 1.0)
    A_xx = (params["W_K"].T @ params["W_Q"])[:-1, :-1]
    return A_xx * (float(params["W_V"][-1, -1]) if kind == "linear" else 1.0)


@dataclass(frozen=True)
class TrainResult:
    """What a training run returns.

    ``params``: the iterate averaged over the last ``average_fraction`` of the steps (Polyak averaging;
    the final iterate when that fraction is 0); ``last_params``: the final iterate; ``loss_curve``: the
    batch loss at every step (before that step's update); ``seconds``: wall time; ``steps``.
    """

    params: Params
    last_params: Params
    loss_curve: np.ndarray
    seconds: float
    steps: int
    param: str
    kind: str
    d: int

    @property
    def M(self) -> np.ndarray:
        """:func:`effective_M` of the averaged parameters."""
        return effective_M(self.param, self.params, self.kind)

    @property
    def w_trained(self) -> float:
        """``tr(M) / d`` of :attr:`M`: the ``w`` of the closest multiple of the identity."""
        return geometry.isotropic_scale(self.M)

    @property
    def anisotropy(self) -> float:
        """:func:`lipschitz_icl.model.geometry.anisotropy` of :attr:`M`."""
        return geometry.anisotropy(self.M)

    def attention(self):
        """The trained predictor as an :class:`Attention` (M-form) or :class:`AttentionLayer`."""
        if self.param == "M":
            value = float(self.params["v"]) if self.kind == "linear" else 1.0
            return Attention(self.params["M"].copy(), self.kind, value)
        return AttentionLayer(
            self.params["W_K"].copy(), self.params["W_Q"].copy(), self.params["W_V"].copy(), self.kind
        )


# --------------------------------------------------------------------------- the loop
# Batches drawn on a worker thread when ``batch * n * d`` (float64 entries, all runs of a stack together) is
# in this range: below, the hand-over costs more than it saves; above, the extra buffers (``AHEAD + 1``
# sets) cost too much memory.
BACKGROUND_ENTRIES = (50_000, 6_250_000)
AHEAD = 2  # batches the worker may draw ahead of the one in use


def _batches(draws, finish, buffers, steps: int, background: bool):
    """``steps`` batches ``finish([draw(b) for draw in draws], b)`` on the buffer sets made by ``buffers()``.

    ``draws``: one function per lane of random streams; each fills its own part of a buffer set (the only
    use of its streams) and returns a token for ``finish``.  Serial: one set, refilled each step, the lanes
    drawn in turn.  ``background``: one worker thread per lane draws every batch, up to :data:`AHEAD`
    batches ahead of the one in use, into ``AHEAD + 1`` rotating sets; this generator calls ``finish`` and
    yields the result.  Each lane draws one batch after the other, so the values are those of the serial
    loop, bit for bit; exactly ``steps`` batches are drawn (fewer if the stream is closed early: the
    workers stop and are joined).
    """
    if not background:
        out = buffers()
        for _ in range(steps):
            yield finish([draw(out) for draw in draws], out)
        return
    sets = [buffers() for _ in range(AHEAD + 1)]
    lanes: list[tuple] = [(draw, queue.SimpleQueue(), threading.Semaphore(len(sets))) for draw in draws]
    stop = threading.Event()

    def draw_all(draw, ready, free):
        try:
            for t in range(steps):
                free.acquire()
                if stop.is_set():
                    return
                ready.put(draw(sets[t % len(sets)]))
        except BaseException as exc:  # handed over to the consumer, raised there
            ready.put(exc)

    workers = [
        threading.Thread(target=draw_all, args=lane, name="lipschitz-icl-prompts", daemon=True) for lane in lanes
    ]
    for worker in workers:
        worker.start()
    try:
        for t in range(steps):
            tokens = [ready.get() for _, ready, _ in lanes]
            for token in tokens:
                if isinstance(token, BaseException):
                    raise token
            yield finish(tokens, sets[t % len(sets)])
            for _, _, free in lanes:
                free.release()
    finally:
        stop.set()
        for _, _, free in lanes:
            free.release()
        for worker in workers:
            worker.join()


def _background(entries: int, background: bool | None) -> bool:
    return BACKGROUND_ENTRIES[0] <= entries <= BACKGROUND_ENTRIES[1] if background is None else background


def prompt_stream(
    problem: Problem, rng: np.random.Generator, batch: int, steps: int, *, background: bool | None = None
):
    """``steps`` batches ``problem.sample_prompts(rng, batch)``, the same draws in the same order.

    Serial: one set of buffers, refilled each step.  ``background`` (default: ``batch * n * d`` within
    :data:`BACKGROUND_ENTRIES`): one worker thread makes the random part of every batch
    (:meth:`~lipschitz_icl.problem.Problem.draw_prompts`), up to :data:`AHEAD` batches ahead of the one
    in use, into ``AHEAD + 1`` rotating sets of buffers; this generator finishes each batch
    (:meth:`~lipschitz_icl.problem.Problem.finish_prompts`) and yields it.  Only the worker touches ``rng``,
    one batch after the other, so the values are those of the serial loop, bit for bit.  A yielded batch
    is valid until the next one is requested; exactly ``steps`` batches are drawn (fewer if the stream is
    closed early: the worker stops and is joined).
    """
    return _batches(
        [lambda out: problem.draw_prompts(rng, batch, out)],
        lambda tasks, out: problem.finish_prompts(tasks[0], out),
        lambda: problem.prompt_buffers(batch),
        steps,
        _background(batch * problem.n * problem.d, background),
    )


@dataclass(frozen=True)
class RunBuffers:
    """The prompts of several runs side by side: ``x`` ``(R, batch, n, d)``, ``y`` ``(R, batch, n)``,
    ``q`` ``(R, batch, d)``, ``fq`` ``(R, batch)``; run ``r``'s part is :meth:`run`."""

    x: np.ndarray
    y: np.ndarray
    q: np.ndarray
    fq: np.ndarray

    @staticmethod
    def empty(runs: int, batch: int, n: int, d: int) -> RunBuffers:
        return RunBuffers(
            np.empty((runs, batch, n, d)),
            np.empty((runs, batch, n)),
            np.empty((runs, batch, d)),
            np.empty((runs, batch)),
        )

    def part(self, r: int, rows: slice) -> PromptBuffers:
        """Prompts ``rows`` of run ``r``: its ``x``, ``y``, ``q`` as :class:`~lipschitz_icl.problem.PromptBuffers`
        (views)."""
        return PromptBuffers(self.x[r, rows], self.y[r, rows], self.q[r, rows])


# A run whose batch holds at least this many context coordinates (``batch * n * d``) draws each batch in two
# halves from two Generators, so that two threads draw them at once (no claim of the registry trains with
# batches this large: at most 256 * 50 * 3 = 38400).
SPLIT_ENTRIES = 50_000


def _second_stream(rng: np.random.Generator) -> np.random.Generator:
    """The Generator of a split run's second half-batches: seeded from four raw 64-bit draws of ``rng``."""
    return np.random.default_rng(rng.bit_generator.random_raw(4))


def run_prompt_stream(problems, rngs, batch: int, steps: int, *, background: bool | None = None):
    """``steps`` stacked batches ``(x, y, q, f(q))`` of several runs, run ``r`` drawing from ``rngs[r]``.

    Run ``r``'s part of each batch is ``problems[r].sample_prompts(rngs[r], batch)`` -- the draws of
    :func:`prompt_stream` of that run alone, bit for bit -- unless ``batch * n * d`` reaches
    :data:`SPLIT_ENTRIES`: then its first ``batch // 2`` prompts are ``sample_prompts(rngs[r], batch // 2)`` and
    the others ``sample_prompts`` from a second Generator (:func:`_second_stream`, seeded from ``rngs[r]``
    before the first batch), each half from its own stream, so that two lanes draw them.  The problems
    share ``n`` and ``d``.  ``background`` as in :func:`prompt_stream` (on ``runs * batch * n * d``): one
    worker thread per lane (the first halves and whole batches; the second halves).  A yielded batch is
    valid until the next one is requested."""
    first = problems[0]
    split = batch >= 2 and batch * first.n * first.d >= SPLIT_ENTRIES
    whole, half = slice(0, batch), slice(0, batch // 2)
    lanes = [[(r, p, rng, half if split else whole) for r, (p, rng) in enumerate(zip(problems, rngs))]]
    if split:
        lanes.append(
            [(r, p, _second_stream(rng), slice(batch // 2, batch)) for r, (p, rng) in enumerate(zip(problems, rngs))]
        )

    def drawer(lane):
        def draw(out: RunBuffers) -> list:
            return [p.draw_prompts(g, rows.stop - rows.start, out.part(r, rows)) for r, p, g, rows in lane]

        return draw

    def finish(tokens: list, out: RunBuffers):
        for lane, tasks in zip(lanes, tokens):
            for (r, p, _, rows), task in zip(lane, tasks):
                out.fq[r, rows] = p.finish_prompts(task, out.part(r, rows))[4]
        return out.x, out.y, out.q, out.fq

    return _batches(
        [drawer(lane) for lane in lanes],
        finish,
        lambda: RunBuffers.empty(len(problems), batch, first.n, first.d),
        steps,
        _background(len(problems) * batch * first.n * first.d, background),
    )


def check_training_work(problem: Problem, steps: int, batch: int, budget: float) -> None:
    """Refuse (naming ``steps``, or ``batch`` when not even one step fits) a run beyond the work ``budget``:
    ``steps * batch * n * (d + 1)`` prompt coordinates at :data:`SECONDS_PER_STEP_COORDINATE`."""
    per_step = batch * problem.n * (problem.d + 1) * SECONDS_PER_STEP_COORDINATE
    affordable = budgets.largest_count(budget, per_step)
    where = f"{batch} prompts per step at n = {problem.n}, d = {problem.d}"
    budgets.check(
        per_step,
        budget,
        name="batch",
        value=batch,
        what=f"one step of {where}",
        cheaper="a smaller batch or n",
    )
    budgets.check(
        steps * per_step,
        budget,
        name="steps",
        value=steps,
        what=f"{steps} steps of {where}",
        cheaper=f"steps <= {affordable}",
    )


@dataclass(frozen=True)
class Protocol:
    """A training protocol, validated (the keyword arguments of :func:`train` other than the problem, the
    seed and the start)."""

    param: str
    kind: str
    steps: int
    batch: int
    lr: float
    optimizer: str
    schedule: str
    final_lr_fraction: float
    average_fraction: float
    init_scale: float
    beta1: float
    beta2: float

    @staticmethod
    def checked(
        problem: Problem,
        *,
        param: str = "M",
        attention: str = "softmax",
        steps: int = 2000,
        batch: int = 256,
        lr: float = 0.01,
        optimizer: str = "adam",
        schedule: str = "constant",
        final_lr_fraction: float = 0.01,
        average_fraction: float = 0.0,
        init_scale: float | None = None,
        betas=(0.9, 0.999),
        budget: float = budgets.ENGINE_SECONDS,
    ) -> Protocol:
        """The protocol of :func:`train`'s keywords for ``problem``, each checked (a refused value raises
        :class:`~lipschitz_icl.validation.ParameterError` naming it), and the run refused before any work
        when it is beyond the work ``budget`` (:func:`check_training_work`)."""
        if not isinstance(problem, Problem):
            raise ParameterError("problem", "a lipschitz_icl.problem.Problem", type(problem).__name__)
        param = check_choice("param", param, PARAMETERISATIONS)
        kind = check_choice("attention", attention, ATTENTION_KINDS)
        optimizer = check_choice("optimizer", optimizer, OPTIMIZERS)
        schedule = check_choice("schedule", schedule, SCHEDULES)
        steps = check_int("steps", steps, minimum=1, maximum=MAX_STEPS)
        if problem.n * (problem.d + 1) > MAX_BATCH_ELEMENTS:
            raise ParameterError(
                "n",
                f"at most {MAX_BATCH_ELEMENTS // (problem.d + 1)} for training in "
                f"d = {problem.d} (one prompt must fit in memory)",
                problem.n,
            )
        largest = max(1, MAX_BATCH_ELEMENTS // (problem.n * (problem.d + 1)))
        batch = check_int("batch", batch, minimum=1, maximum=largest)
        check_training_work(problem, steps, batch, budget)
        lr = check_real("lr", lr, minimum=0.0, strict_minimum=True, maximum=MAX_LR)
        final_lr_fraction = check_real("final_lr_fraction", final_lr_fraction, minimum=0.0, maximum=1.0)
        average_fraction = check_real("average_fraction", average_fraction, minimum=0.0, maximum=0.999)
        scale = DEFAULT_INIT_SCALE[param] if init_scale is None else init_scale
        scale = check_real("init_scale", scale, minimum=0.0, strict_minimum=True)
        try:
            beta1, beta2 = betas
        except (TypeError, ValueError):
            raise ParameterError("betas", "a pair (beta1, beta2) in [0, 1)", betas) from None
        return Protocol(
            param=param,
            kind=kind,
            steps=steps,
            batch=batch,
            lr=lr,
            optimizer=optimizer,
            schedule=schedule,
            final_lr_fraction=final_lr_fraction,
            average_fraction=average_fraction,
            init_scale=scale,
            beta1=check_real("betas[0]", beta1, minimum=0.0, maximum=0.9999),
            beta2=check_real("betas[1]", beta2, minimum=0.0, maximum=0.9999),
        )

    @property
    def averaged_steps(self) -> int:
        """``ceil(average_fraction * steps)``: the last steps whose iterates are averaged (0: none)."""
        return int(np.ceil(self.average_fraction * self.steps)) if self.average_fraction > 0 else 0

    def learning_rate(self, step: int) -> float:
        """The rate of ``step`` (:func:`_learning_rate`; the step schedule switches where averaging starts,
        or half-way without averaging)."""
        switch = self.steps - self.averaged_steps if self.averaged_steps else self.steps // 2
        return _learning_rate(self.lr, self.schedule, step, self.steps, self.final_lr_fraction, switch)


def train(
    problem: Problem,
    *,
    param: str = "M",
    attention: str = "softmax",
    steps: int = 2000,
    batch: int = 256,
    lr: float = 0.01,
    optimizer: str = "adam",
    schedule: str = "constant",
    final_lr_fraction: float = 0.01,
    average_fraction: float = 0.0,
    seed=0,
    init: Params | None = None,
    init_scale: float | None = None,
    betas=(0.9, 0.999),
    progress: bool | None = None,
    budget: float = budgets.ENGINE_SECONDS,
) -> TrainResult:
    """Online pretraining: ``steps`` updates, each on ``batch`` fresh prompts from ``problem``.

    Each step takes one optimiser step on the batch loss ``(1/B) sum_b (yhat_b - f_b(q_b))^2`` with its
    exact gradient (module docstring).

    Parameters
    ----------
    problem : Problem
        The problem the prompts are drawn from (:meth:`~lipschitz_icl.problem.Problem.sample_prompts`).
    param : {"M", "full"}
        The ``M``-form of Eq. (4) or the full ``(W_K, W_Q, W_V)`` layer.
    attention : {"softmax", "linear"}
        The attention kind.
    steps : int
        Optimiser steps, ``1 <= steps <= 1e6``.
    batch : int
        Fresh prompts per step (one batch must fit the memory bound).
    lr : float
        Learning rate, ``0 < lr <= 1000``.
    optimizer : {"adam", "sgd"}
        The optimiser; ``betas`` are Adam's ``(beta1, beta2)``, each in ``[0, 1)``.
    schedule : {"constant", "cosine", "step", "inverse"}
        Cosine decays ``lr`` to ``final_lr_fraction * lr``; step uses ``lr`` until the averaging window
        starts (or half-way without averaging) and ``final_lr_fraction * lr`` after; inverse is the
        Robbins-Monro ``lr t0 / (t0 + t)``, ``t0`` chosen so that the last step has ``final_lr_fraction * lr``.
    final_lr_fraction : float
        In ``[0, 1]``.
    average_fraction : float
        In ``[0, 1)``: the returned ``params`` average the iterates of the last
        ``ceil(average_fraction * steps)`` steps (0: the final iterate).
    seed : int, numpy.random.SeedSequence or numpy.random.Generator
        One Generator draws the initial parameters (unless ``init`` is given) and then every batch (a batch
        of at least :data:`SPLIT_ENTRIES` context coordinates ``batch * n * d``: its first half; the second
        half from a Generator seeded from the first, :func:`run_prompt_stream`).
    init : dict of numpy.ndarray, optional
        Initial parameters (``{"M"}``, ``{"M", "v"}`` or ``{"W_K", "W_Q", "W_V"}``).
    init_scale : float, optional
        Scale of the random start (default :data:`DEFAULT_INIT_SCALE`).
    betas : tuple of float
        Adam's ``(beta1, beta2)``.
    progress : bool, optional
        A ``tqdm`` bar on stderr (:func:`lipschitz_icl.progress.bar`, never while progress is silenced);
        ``None`` draws it when stderr is a terminal and ``steps * batch >= 200_000``.
    budget : float
        The work budget in estimated seconds (:mod:`lipschitz_icl.budget`; ``steps * batch * n * (d + 1)``
        prompt coordinates): beyond it the run is refused before any work, naming the steps within it.

    The run is :func:`train_runs` of this one run.

    Returns
    -------
    TrainResult
        The (averaged) parameters, the final iterate, the loss curve, the effective ``M`` and its
        ``w_trained = tr(M) / d``.

    Examples
    --------
    The trained ``M`` of softmax attention is close to a multiple of the identity whose scale is near
    the exact ``w*``:

    >>> from lipschitz_icl import make_problem
    >>> from lipschitz_icl.optimum import wstar
    >>> from lipschitz_icl.model.train import train
    >>> problem = make_problem("affine", d=3, n=20, L=1.0, sigma=0.3)
    >>> result = train(problem, steps=300, batch=64, lr=0.1, schedule="cosine", seed=0)
    >>> result.M.shape, result.loss_curve.shape
    ((3, 3), (300,))
    >>> bool(result.loss_curve[-20:].mean() < result.loss_curve[:20].mean())
    True
    >>> bool(abs(result.w_trained / wstar(problem, "exact").w_star.value - 1) < 0.1)
    True
    """
    if not isinstance(problem, Problem):
        raise ParameterError("problem", "a lipschitz_icl.problem.Problem", type(problem).__name__)
    protocol = {
        "param": param,
        "attention": attention,
        "steps": steps,
        "batch": batch,
        "lr": lr,
        "optimizer": optimizer,
        "schedule": schedule,
        "final_lr_fraction": final_lr_fraction,
        "average_fraction": average_fraction,
        "init_scale": init_scale,
        "betas": betas,
        "budget": budget,
    }
    return train_runs([problem], [seed], inits=[init], progress=progress, **protocol)[0]


def train_runs(problems, seeds, *, inits=None, progress: bool | None = None, **protocol) -> list[TrainResult]:
    """Independent runs of :func:`train` side by side: run ``r`` trains on ``problems[r]`` from ``seeds[r]``
    (and ``inits[r]`` when given), with the same ``protocol`` keywords (those of :func:`train`).

    Each run is the run ``train(problems[r], seed=seeds[r], init=inits[r], **protocol)`` would make, bit
    for bit: its own Generator draws its start and its prompts in the same order, and its arithmetic is
    the same, done on a stack of runs (one NumPy operation for all of them, so a step of ``R`` small runs
    costs far less than ``R`` steps).  The problems share ``d`` and ``n`` (their task classes, ``L`` and
    ``sigma`` may differ).  Runs are stacked as far as :data:`MAX_BATCH_ELEMENTS` allows, the rest in
    further stacks.  A run that diverges stops all of them (``FloatingPointError`` naming the step and the
    run).  Each result's ``seconds`` is the wall time of its stack's loop.

    Every run is validated as :func:`train` validates it, before any run starts: its protocol and its
    work ``budget`` (a ``protocol`` keyword, :func:`check_training_work` per run).
    """
    problems, seeds = list(problems), list(seeds)
    inits = [None] * len(problems) if inits is None else list(inits)
    if not problems or len(seeds) != len(problems) or len(inits) != len(problems):
        raise ParameterError("seeds", f"one seed (and init) per problem ({len(problems)} problems)", len(seeds))
    checked = [Protocol.checked(p, **protocol) for p in problems]
    shapes = {(p.d, p.n) for p in problems}
    if len(shapes) > 1:
        raise ParameterError("problems", "problems of one d and n", sorted(shapes))
    plan, d, n = checked[0], problems[0].d, problems[0].n
    stack = max(1, MAX_BATCH_ELEMENTS // (plan.batch * n * (d + 1)))
    out: list[TrainResult] = []
    for first in range(0, len(problems), stack):
        part = slice(first, first + stack)
        out += _train_stack(problems[part], seeds[part], inits[part], plan, progress)
    return out


def _train_stack(problems, seeds, inits, plan: Protocol, progress) -> list[TrainResult]:
    """One stack of :func:`train_runs`: parameters of shape ``(R, ...)``, each run's prompts from its own
    Generator (:func:`run_prompt_stream`)."""
    rngs = [check_rng(seed) for seed in seeds]
    d, kind = problems[0].d, plan.kind
    starts = [
        init_params(plan.param, d, kind, rng, plan.init_scale)
        if init is None
        else _check_init(init, plan.param, d, kind)
        for rng, init in zip(rngs, inits)
    ]
    params = {name: np.stack([start[name] for start in starts]) for name in starts[0]}
    opt = Adam(plan.beta1, plan.beta2) if plan.optimizer == "adam" else SGD()
    steps, n_avg = plan.steps, plan.averaged_steps
    avg = {name: np.zeros_like(value) for name, value in params.items()}
    curve = np.empty((steps, len(problems)))
    prompts = steps * plan.batch * len(problems)
    show = progress if progress is not None else (None if prompts >= LONG_RUN_PROMPTS else False)
    start = time.perf_counter()
    with (
        progress_bar(total=steps, desc="train", unit="step", show=show) as bar,
        contextlib.closing(run_prompt_stream(problems, rngs, plan.batch, steps)) as stream,
    ):
        for t, (x, y, q, fq) in enumerate(stream):
            loss, grads = loss_and_grad(plan.param, params, x, y, q, fq, kind=kind)
            _check_finite(loss, t)
            curve[t] = loss
            opt.step(params, grads, plan.learning_rate(t))
            if t >= steps - n_avg:
                for name in avg:
                    avg[name] += params[name] / n_avg
            if not bar.disable:
                bar.set_postfix(loss=f"{float(np.mean(loss)):.4g}", refresh=False)
                bar.update()
    seconds = time.perf_counter() - start
    results = []
    for r in range(len(problems)):
        last = {name: np.array(value[r]) for name, value in params.items()}
        averaged = {name: np.array(value[r]) for name, value in (avg if n_avg else params).items()}
        results.append(TrainResult(averaged, last, curve[:, r].copy(), seconds, steps, plan.param, kind, d))
    return results


def _check_finite(loss, step: int) -> None:
    """Raise ``FloatingPointError`` when a run's batch loss at ``step`` is not finite."""
    losses = np.atleast_1d(loss)
    bad = np.flatnonzero(~np.isfinite(losses))
    if bad.size:
        run = "" if losses.size == 1 else f", run {int(bad[0])}"
        raise FloatingPointError(f"training diverged at step {step} (loss {losses[bad[0]]}{run}); lower lr")
