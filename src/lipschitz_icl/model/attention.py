"""Attention predictors: softmax and linear attention in the ``M``-form, and the full layer.

Paper's Eq. (4) form (``W_K^T W_Q = [[M, 0], [0, 0]]``, value reads the label only):

    softmax:  yhat(q) = sum_i y_i exp(x_i^T M q) / sum_j exp(x_j^T M q)
    linear:   yhat(q) = (v / n) sum_i y_i x_i^T M q

Both are ``yhat = sum_i p_i y_i`` with weights ``p`` from :func:`softmax_weights` or
:func:`linear_weights`.  The query does not attend to itself.  :class:`AttentionLayer` is the general
single layer ``(W_K, W_Q, W_V)`` on tokens ``z_i = [x_i; y_i]`` with query token ``[q; 0]``; its
prediction is the last coordinate of the output at the query token.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lipschitz_icl.validation import ParameterError, check_choice, check_matrix, check_real

__all__ = [
    "ATTENTION_KINDS",
    "Attention",
    "AttentionLayer",
    "softmax_weights",
    "softmax_weights_from_logits",
    "linear_weights",
]

ATTENTION_KINDS = ("softmax", "linear")


def softmax_weights_from_logits(logits: np.ndarray) -> np.ndarray:
    """``p_i = exp(s_i - max_j s_j) / sum_j exp(s_j - max_j s_j)`` along the last axis (log-space
    softmax: no overflow for any finite logits)."""
    with np.errstate(over="ignore"):  # finite - finite may overflow to -inf: weight exp(-inf) = 0
        shifted = logits - np.max(logits, axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=-1, keepdims=True)


def softmax_weights(x: np.ndarray, q: np.ndarray, M: np.ndarray) -> np.ndarray:
    """``p_i = softmax_i(x_i^T M q)`` for ``x`` ``(..., n, d)``, ``q`` ``(..., d)``."""
    return softmax_weights_from_logits(np.einsum("...nd,...d->...n", x, q @ M.T))


def linear_weights(x: np.ndarray, q: np.ndarray, M: np.ndarray, value: float = 1.0) -> np.ndarray:
    """``p_i = (v / n) x_i^T M q`` (linear attention: no normaliser, weights need not sum to one)."""
    n = x.shape[-2]
    return (value / n) * np.einsum("...nd,...d->...n", x, q @ M.T)


@dataclass(frozen=True)
class Attention:
    """Attention in the ``M``-form: ``kind`` in {softmax, linear}, matrix ``M``, value weight ``v``."""

    M: np.ndarray
    kind: str = "softmax"
    value: float = 1.0

    @staticmethod
    def isotropic(w: float, d: int, kind: str = "softmax") -> Attention:
        """``M = w I_d``."""
        w = check_real("w", w)
        return Attention(w * np.eye(d), check_choice("attention", kind, ATTENTION_KINDS))

    @staticmethod
    def create(M, d: int, kind: str = "softmax", value: float = 1.0) -> Attention:
        """Validated constructor: ``M`` finite ``d x d``, ``kind`` known, ``value`` finite."""
        return Attention(
            check_matrix("M", M, d), check_choice("attention", kind, ATTENTION_KINDS), check_real("value", value)
        )

    @property
    def d(self) -> int:
        return self.M.shape[0]

    @property
    def w(self) -> float | None:
        """``w`` when ``M = w I`` exactly, else ``None``."""
        w = float(self.M[0, 0])
        return w if np.array_equal(self.M, w * np.eye(self.d)) else None

    def weights(self, x: np.ndarray, q: np.ndarray) -> np.ndarray:
        """The weights ``p_i`` with ``yhat = sum_i p_i y_i``."""
        if self.kind == "softmax":
            return softmax_weights(x, q, self.M)
        return linear_weights(x, q, self.M, self.value)

    def predict(self, x: np.ndarray, y: np.ndarray, q: np.ndarray) -> np.ndarray:
        """``yhat(q) = sum_i p_i y_i``."""
        return np.einsum("...n,...n->...", self.weights(x, q), y)


@dataclass(frozen=True)
class AttentionLayer:
    """One attention layer with ``W_K, W_Q`` (``k x (d+1)``) and ``W_V`` (``(d+1) x (d+1)``).

    score_i = z_i^T W_K^T W_Q z_q,   out = sum_i a_i W_V z_i,   yhat = out[d],
    ``a = softmax(score)`` (softmax) or ``a = score / n`` (linear), ``z_i = [x_i; y_i]``,
    ``z_q = [q; 0]``.
    """

    W_K: np.ndarray
    W_Q: np.ndarray
    W_V: np.ndarray
    kind: str = "softmax"

    def __post_init__(self):
        check_choice("attention", self.kind, ATTENTION_KINDS)
        shapes = (np.shape(self.W_K), np.shape(self.W_Q), np.shape(self.W_V))
        D = shapes[2][0] if len(shapes[2]) == 2 else -1
        if len(shapes[0]) != 2 or shapes[0] != shapes[1] or shapes[0][1] != D or shapes[2] != (D, D) or D < 3:
            raise ParameterError(
                "W_K, W_Q, W_V", "matrices of shapes (k, d+1), (k, d+1), (d+1, d+1) with d >= 2", shapes
            )
        if not all(np.all(np.isfinite(W)) for W in (self.W_K, self.W_Q, self.W_V)):
            raise ParameterError("W_K, W_Q, W_V", "finite matrices", "non-finite entries")

    @staticmethod
    def from_M(M: np.ndarray, kind: str = "softmax") -> AttentionLayer:
        """The Eq. (4) layer: ``W_K = I``, ``W_Q = [[M, 0], [0, 0]]``, ``W_V = e_{d+1} e_{d+1}^T``."""
        d = np.shape(M)[0]
        M = check_matrix("M", M, d)
        W_Q = np.zeros((d + 1, d + 1))
        W_Q[:d, :d] = M
        W_V = np.zeros((d + 1, d + 1))
        W_V[d, d] = 1.0
        return AttentionLayer(np.eye(d + 1), W_Q, W_V, kind)

    @property
    def d(self) -> int:
        return self.W_V.shape[0] - 1

    def scores(self, x: np.ndarray, y: np.ndarray, q: np.ndarray) -> np.ndarray:
        """``z_i^T W_K^T W_Q z_q`` for each context token, shape ``(..., n)``."""
        z = np.concatenate([x, y[..., None]], axis=-1)
        zq = np.concatenate([q, np.zeros(q.shape[:-1] + (1,))], axis=-1)
        return np.einsum("...nk,...k->...n", z @ self.W_K.T, zq @ self.W_Q.T)

    def predict(self, x: np.ndarray, y: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Last coordinate of ``sum_i a_i W_V z_i`` at the query token."""
        s = self.scores(x, y, q)
        a = softmax_weights_from_logits(s) if self.kind == "softmax" else s / x.shape[-2]
        z = np.concatenate([x, y[..., None]], axis=-1)
        return np.einsum("...n,...n->...", a, z @ self.W_V[self.d])
