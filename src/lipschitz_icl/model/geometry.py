"""Shape measures of a trained attention matrix: isotropy, low-rank support, Eq. (4) block structure.

Each measure is a scale-free ratio in ``[0, 1]`` (``0`` = the structure the paper predicts at the
optimum), so a threshold on it does not depend on how large the trained matrix grew.

- :func:`anisotropy` (Lemma B.5): ``||M - (tr M / d) I||_F / ||M||_F``; zero iff ``M = w I``.
- :func:`rho` (Theorem 4.4): ``||M - P M P||_F / ||M||_F`` with ``P = B B^T``; zero iff ``M`` acts
  only on ``col(B)`` (``M = P M P``).
- :func:`value_leak` (Lemma B.1): ``||W_V[d, :d]||_2 / ||W_V[d, :]||_2``, the share of the value row
  that writes the prediction coming from the covariates rather than the label.
- :func:`kq_label_coupling` (Eq. (4)): ``|A[d, :d]| / ||A[:, :d]||_F`` with ``A = W_K^T W_Q``, the share
  of the score matrix that couples the context labels to the query (``score_i = x_i^T A_xx q +
  y_i A_yx q``; Eq. (4) has ``A_yx = 0``).
- :func:`block_distance` (Eq. (4)): the distance of ``A = W_K^T W_Q`` (:func:`kq_matrix`) to the block form
  ``[[w I, 0], [0, 0]]`` on the columns that reach the prediction.

:func:`anisotropic_directions` gives unit perturbations orthogonal to ``I`` (the probes of Lemma B.5).

The last column ``A[:, d]`` of ``W_K^T W_Q`` multiplies the label slot of the query token, which is
``0``: it never reaches the prediction, so no measure here constrains it (see :func:`kq_label_coupling`).
"""

from __future__ import annotations

import math

import numpy as np

from lipschitz_icl.validation import ParameterError

__all__ = [
    "anisotropy",
    "isotropic_scale",
    "rho",
    "value_leak",
    "kq_label_coupling",
    "anisotropic_directions",
    "kq_matrix",
    "block_distance",
]


def _square(name: str, M) -> np.ndarray:
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] < 1 or not np.all(np.isfinite(M)):
        raise ParameterError(name, "a finite square matrix", f"array of shape {M.shape}")
    return M


def _ratio(num: float | np.floating, den: float | np.floating) -> float:
    if den == 0.0:
        raise ParameterError("M", "a matrix with a non-zero norm", "the zero matrix")
    return float(num / den)


def isotropic_scale(M) -> float:
    """``w = tr(M) / d``: the ``w`` of the closest (Frobenius) multiple of the identity ``w I``."""
    M = _square("M", M)
    return float(np.trace(M) / M.shape[0])


def anisotropy(M) -> float:
    """``||M - (tr M / d) I||_F / ||M||_F`` (Lemma B.5: ``0`` iff ``M`` is a multiple of ``I_d``).

    ``(tr M / d) I`` is the orthogonal projection of ``M`` onto ``span{I}`` in the Frobenius inner
    product, so the ratio is the sine of the angle between ``M`` and ``I``: in ``[0, 1]``, and ``1`` iff
    ``tr M = 0``.  For ``M`` with i.i.d. centred Gaussian entries the squared numerator and denominator
    have expectations ``(d^2 - 1) s^2`` and ``d^2 s^2``: the trace part is one of ``d^2`` equally weighted
    directions, so a random ``M`` has anisotropy near ``sqrt(1 - 1/d^2)``.
    """
    M = _square("M", M)
    d = M.shape[0]
    return _ratio(np.linalg.norm(M - (np.trace(M) / d) * np.eye(d)), np.linalg.norm(M))


def rho(M, B) -> float:
    """``rho(M, B) = ||M - P M P||_F / ||M||_F`` with ``P = B B^T`` (Theorem 4.4's representation error).

    ``B`` is ``d x k`` with orthonormal columns; ``P M P`` is the orthogonal (Frobenius) projection of
    ``M`` onto matrices acting on ``col(B)``, so ``rho`` is in ``[0, 1]``, ``0`` iff ``M = P M P``.
    """
    M = _square("M", M)
    B = np.asarray(B, dtype=np.float64)
    d = M.shape[0]
    if B.ndim != 2 or B.shape[0] != d or not np.allclose(B.T @ B, np.eye(B.shape[1]), atol=1e-10):
        raise ParameterError("B", f"a {d} x k matrix with orthonormal columns", f"array of shape {B.shape}")
    P = B @ B.T
    return _ratio(np.linalg.norm(M - P @ M @ P), np.linalg.norm(M))


def value_leak(W_V) -> float:
    """``||W_V[d, :d]||_2 / ||W_V[d, :]||_2`` (Lemma B.1: ``0`` iff the prediction reads labels only).

    Row ``d`` (0-based; the last row) of ``W_V`` is the only one that reaches the prediction
    ``yhat = sum_i a_i (W_V z_i)[d] = sum_i a_i (W_V[d, :d] . x_i + W_V[d, d] y_i)``.
    """
    W_V = _square("W_V", W_V)
    row = W_V[-1]
    return _ratio(np.linalg.norm(row[:-1]), np.linalg.norm(row))


def kq_label_coupling(W_K, W_Q) -> float:
    """``||A[d, :d]||_2 / ||A[:, :d]||_F`` with ``A = W_K^T W_Q`` (Eq. (4): ``0`` at the optimum).

    With ``z_i = [x_i; y_i]`` and the query token ``[q; 0]`` the score is
    ``z_i^T A [q; 0] = x_i^T A[:d, :d] q + y_i A[d, :d] q``: ``A[:, :d]`` is all of ``A`` that reaches
    the prediction, and ``A[d, :d]`` is its label-query part, which Eq. (4) sets to zero.  The column
    ``A[:, d]`` (the ``x``-label off-diagonal block and the label-label entry of Eq. (4)) multiplies the
    query's zero label slot; its gradient vanishes identically and its value is a convention of Eq. (4),
    not something the loss decides, so it is left out of the measure.
    """
    W_K = np.asarray(W_K, dtype=np.float64)
    W_Q = np.asarray(W_Q, dtype=np.float64)
    if W_K.ndim != 2 or W_K.shape != W_Q.shape or W_K.shape[1] < 2:
        raise ParameterError("W_K, W_Q", "matrices of the same shape (k, d+1)", (W_K.shape, W_Q.shape))
    A = W_K.T @ W_Q
    return _ratio(np.linalg.norm(A[-1, :-1]), np.linalg.norm(A[:, :-1]))


def anisotropic_directions(A) -> dict:
    """Unit-Frobenius perturbations orthogonal to ``I`` built from one square ``A``: ``"symmetric"``
    ``A + A^T - (tr(A + A^T)/d) I`` (traceless), ``"antisymmetric"`` ``A - A^T`` and ``"rank-one"``
    ``u u^T - I/d``, ``u = A[:, 0]/||A[:, 0]||`` (traceless); each divided by its Frobenius norm."""
    A = _square("A", A)
    d = A.shape[0]
    S = A + A.T
    S -= np.trace(S) / d * np.eye(d)
    u = A[:, 0] / np.linalg.norm(A[:, 0])
    R = np.outer(u, u) - np.eye(d) / d
    return {
        "symmetric": S / np.linalg.norm(S),
        "antisymmetric": (A - A.T) / np.linalg.norm(A - A.T),
        "rank-one": R / np.linalg.norm(R),
    }


def kq_matrix(params) -> np.ndarray:
    """``A = W_K^T W_Q`` of full-layer parameters."""
    return params["W_K"].T @ params["W_Q"]


def block_distance(A) -> float:
    """Distance of ``A = W_K^T W_Q`` to the Eq. (4) form ``[[w I, 0], [0, 0]]`` on the columns that reach
    the prediction: ``sqrt(||A_xx - (tr A_xx / d) I||_F^2 + ||A[d, :d]||^2) / ||A[:, :d]||_F`` (0 iff the
    form holds; a scale-free ratio in ``[0, 1]``)."""
    A = np.asarray(A, dtype=float)
    d = A.shape[0] - 1
    A_xx = A[:d, :d]
    off = A_xx - np.trace(A_xx) / d * np.eye(d)
    return float(math.sqrt(np.sum(off**2) + np.sum(A[d, :d] ** 2)) / np.linalg.norm(A[:, :d]))
