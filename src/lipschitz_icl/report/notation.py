"""The report's notation: one symbol per meaning, and the terms of the records defined where they occur.

:data:`NOTATION` lists every symbol the report's text, tables, captions and figure axes use across sections, each
with its one meaning.  Symbols local to one lemma or one sentence are defined where they occur and collide with no
symbol of the table: the cap height ``h``; the projection threshold ``s``, ``X = ||Px||^2`` and its Beta
parameters ``nu_1, nu_2``; the count ``N`` of points in a cap, its threshold ``a``, the cap probability ``p``,
``mu = n p``, the Chernoff bound's relative deviation ``r`` and the relative entropy ``KL``; ``chi`` in ``1 + chi <=
e^chi``; the isotropy probe's directions ``D_j``; ``Y`` (an end of a certified interval); the linear closed form's
``a_0, a_1, a_2`` and ``t = x . q``; the regularity law's ``gamma``, ``u`` and kernel coefficients ``c_gamma, c_1,
c_2``; the probe tasks' ``u, phi, s_i``.  Where the registry's own words reuse a letter, the render-level renames
(:data:`lipschitz_icl.report.symbols.RENAMES`) print it as the table's symbol in that group or claim: the bias
and noise parts ``B(w), N(w)`` as ``\\mathcal{B}(w), \\mathcal{N}(w)`` (``B`` is the low-rank basis); the bias
power ``p`` (regularity: ``beta``) as ``zeta`` (``p_i`` are the softmax weights, ``beta`` the noise power); the
window law's next-order exponent ``q`` as ``q'`` (``q`` is the query); a probability ``P(...)`` as
``\\mathbb{P}`` (``P`` is the projector); the ICL loss ``L(...)``, ``Delta L`` as ``\\mathcal{L}`` (``L`` is the
Lipschitz constant); a move's step ``s`` as ``xi``; the window-law constant ``C`` as ``C_d`` (``C`` is the constant
of a proved inequality); the linear group's task covariance ``k(s)`` as ``K(t)``; Dasgupta and Gupta's ``beta =
s d/k`` as ``tau``; a resolution written ``s``, ``c``, ``x`` or ``gamma`` as ``delta``
(:data:`lipschitz_icl.report.symbols.RESOLUTION_LETTERS`).  :data:`GLOSSARY` defines the words of the records a
reader meets undefined (``gated``, ``signal-matched``, ``cosine-4``, the rule types, ``Bonferroni``);
:func:`glossary` keeps the entries whose term occurs in the report's text.
"""

from __future__ import annotations

import re

__all__ = ["NOTATION", "GLOSSARY", "glossary"]

# (symbol in LaTeX math, meaning in LaTeX text)
NOTATION: tuple[tuple[str, str], ...] = (
    (r"d", r"dimension: covariates $x$ and queries $q$ are uniform on the sphere $S^{d-1}\subset\mathbb{R}^d$"),
    (r"n", r"context size (number of labelled examples in a prompt)"),
    (r"L", r"Lipschitz constant of the task class; $L'$ the constant of a mismatched pretraining class"),
    (r"\sigma", r"standard deviation of the label noise"),
    (
        r"\Lambda,\ \Lambda_0",
        r"$nL^2/\sigma^2$, whose powers bound $w^*$ (Theorem~3.4); $\Lambda_0 = n/\sigma^2$ (the regularity law)",
    ),
    (r"M", r"attention matrix: the top-left block of $W_K^{\top}W_Q$"),
    (r"W_K, W_Q, W_V", r"the attention layer's key, query and value matrices"),
    (r"w,\ w^*", r"window scale ($M = wI$: bandwidth $1/\sqrt{w}$) and its optimum"),
    (r"\alpha,\ C_d", r"exponent and constant of the window law $w^* \approx C_d\Lambda^{\alpha}$"),
    (
        r"c_{\mathrm{lo}}, c_{\mathrm{hi}}",
        r"the two-sided constants of Theorem~3.4: $\min$ and $\max$ of $w^*/\Lambda^{\alpha}$ over a range of $n$",
    ),
    (
        r"\kappa,\ q'",
        r"coefficient and exponent of the next order of the window law, "
        r"$w^* = C_d\Lambda^{\alpha}(1 + \kappa w_0^{-q'})$, $w_0 = C_d\Lambda^{\alpha}$; $q'$ is the bias part's "
        r"relative next order: $1$ (affine), $1/2$ (ReLU)",
    ),
    (r"\zeta,\ b_d", r"power and constant of the large-$n$ bias part, $b_d L^2 w^{-\zeta}$"),
    (r"\beta,\ c_R", r"power and constant of the noise part, $\sigma^2 c_R w^{\beta}/n$, $\beta = (d-1)/2$"),
    (r"\Phi_d(w)", r"$\mathbb{E}\exp(w\,x\cdot q)$ for $x$ uniform on the sphere"),
    (r"p_i", r"softmax attention weight of context point $i$"),
    (r"m^*,\ E_{\mathrm{lin}}", r"optimal linear attention $m^*I$ and its ICL error"),
    (
        r"K(t),\ \bar K",
        r"task covariance $\mathbb{E}_f f(x)f(x')$ at $x\cdot x' = t$, and $\bar K = \mathbb{E}_t[t\,K(t)]$",
    ),
    (
        r"B,\ k,\ P,\ Q",
        r"basis of the low-rank subspace ($d\times k$, orthonormal columns), its rank, $P = BB^{\top}$, $Q = I - P$",
    ),
    (r"c^*", r"optimal scale of $c\,BB^{\top}$"),
    (r"\rho(M,B)", r"the paper's representation error $\|M - PMP\|_F/\|M\|_F$"),
    (r"\mathcal{L},\ E", r"ICL loss: expected squared error of the prediction at the query ($E$: of a given layer)"),
    (
        r"\mathcal{B}(w),\ \mathcal{N}(w)",
        r"bias and noise parts of the ICL loss of $M = wI$, "
        r"$\mathcal{L}(wI) = L^2 \mathcal{B}(w) + \sigma^2 \mathcal{N}(w)$",
    ),
    (r"\mathbb{P},\ \mathbb{E}", r"probability and expectation"),
    (r"\xi", r"step of a probe move"),
    (
        r"C,\ C^*",
        r"constant of a proved inequality (a rate, floor or factor) and the largest $C$ proved",
    ),
    (
        r"T,\ T^*",
        r"tightness of a proved band (between $T$ times the law and the law over $T$); the largest $T$ proved",
    ),
    (r"\tau", r"$s\,d/k$ in the projection tails ($s$ their threshold)"),
    (
        r"\delta,\ \varepsilon,\ \theta",
        r"a claim's resolution: the smallest change of its parameter its rule refutes ($\delta X$: of $X$; "
        r"$\varepsilon$ in log scale, $\theta$ an angle)",
    ),
)

# (term as a regular expression on the report's text, the term as printed, its definition)
GLOSSARY: tuple[tuple[str, str, str], ...] = (
    (r"\bgated\b", "gated", "a compared number that enters the verdict (the others are reported only)"),
    (
        r"signal-matched",
        "signal-matched",
        r"low-rank problems scaled so that the task is the same function of $\sqrt{d/k}\,B^{\top}x$ at every $d$",
    ),
    (
        r"\b(?:cosine|triangle|distance)-\d",
        "cosine-$j$, triangle-$j$, distance-$j$",
        r"probe tasks of Theorem~3.5 outside the pretraining classes: $(L/j)\cos(j\,u\cdot x + \phi)$, "
        r"$(L/j)\,\mathrm{tri}(j\,u\cdot x + \phi)$ with $\mathrm{tri}$ a triangle wave of slopes $\pm 1$, "
        r"$L(\min_{i\le j}\|x - s_i\| - 1)$ ($u$ and $s_i$ uniform on the sphere, $\phi$ uniform on $[0, 2\pi]$); "
        r"each $L$-Lipschitz",
    ),
    (
        r"\bd\d+k\d+\b",
        r"\code{d3k1}, \code{d4k2}, \dots",
        "a low-rank case: dimension $d$ and rank $k$ (d3k1: $d = 3$, $k = 1$)",
    ),
    (r"[Cc]lopper", "Clopper-Pearson", r"the exact binomial confidence interval \cite{clopper1934}"),
    (
        r"rule \((?:equivalence|one-sided|sign|asymptotic)\)",
        "rule (equivalence, one-sided, sign, asymptotic)",
        r"the interval lies inside $\pm$margin; beyond the bound; on the predicted side; at the largest $n$ "
        r"within the margin of the law, following its derived next-order term",
    ),
    (
        r"Bonferroni",
        "Bonferroni",
        r"intervals each at the family's error rate over their number, all holding together at the family's level",
    ),
    (r"Welch", "Welch", "a two-sample $t$-interval without assuming equal variances"),
    (r"antithetic", "antithetic", "samples paired with their reflections, whose first-order errors cancel"),
    (
        r"R_\{?d\}?\(|R_\{?d\}?\$",
        "$R_d(w)$",
        r"the collision ratio $\Phi_d(2w)/\Phi_d(w)^2$: $n\,\mathbb{E}\sum_i p_i^2 \to R_d(w)$ as $n \to \infty$",
    ),
    (r"r_\{?1\}?", "$r_1(d)$", r"the relative $1/w$ term of $R_d$: $R_d(w) \approx c_R w^{\beta}(1 + r_1/w)$"),
    (r"c_\{?q\}?", "$c_q$", r"the derived coefficient of the $1/n^2$ term of the noise part"),
    (
        r"A_\{?d\}?",
        "$A_d(w)$",
        r"$\Phi_d'(w)/\Phi_d(w)$, the mean of $x\cdot q$ under the weights $\exp(w\,x\cdot q)$; "
        r"$1 - A_d(w) \approx (d-1)/(2w)$",
    ),
    (
        r"\\mathcal\{L\}_\{?P\}?|L_\{?P\}?",
        r"$\mathcal{L}_P(d)$, $\mathcal{L}_P(\infty)$",
        r"the optimal ICL error of $c\,BB^{\top}$ on the signal-matched low-rank problem at dimension $d$, and "
        r"its $d$-free limit",
    ),
    (
        r"\$M\$-form|M-form",
        "$M$-form",
        r"the layer trained through $M$ itself ($W_K^{\top}W_Q$ in the block form of Eq.~(4)), not a full layer",
    ),
    (
        r"\bregistry\b",
        "registry",
        r"the project's claims: each statement with its rule, margin, grid and seeds, fixed before the data",
    ),
    (
        r"\bsalt\b|re-lock",
        "salt, re-lock",
        r"a locked design's seed salt; a changed design is re-locked with a new salt, so it draws fresh data",
    ),
    (
        r"trusted base",
        "trusted base",
        r"the prover's closed-form quantities and the theorems it relies on without proving them (tested apart)",
    ),
    (
        r"\bexploratory\b",
        "exploratory",
        "a claim whose rule was set after seeing data: reported, never counted as the paper holding or failing",
    ),
)


def glossary(text: str) -> list[tuple[str, str]]:
    """``(term, definition)`` for every :data:`GLOSSARY` entry whose term occurs in ``text``."""
    return [(shown, meaning) for pattern, shown, meaning in GLOSSARY if re.search(pattern, text)]
