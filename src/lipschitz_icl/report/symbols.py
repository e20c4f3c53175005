"""The report's one mapping from the records' words to symbols: the FALLBACK used until the measure
functions write the fields themselves.

``claims.json`` is growing (``/work/helpers/CLAIMS_JSON_v2.md`` of the project): a quantity may carry
``symbol`` (LaTeX), ``setting`` (``{"task": "relu", "d": 3}``) and ``constant: true``, and a resolution
``symbol`` and ``meaning``.  Where a record has them, the report uses them and this module is not
consulted.  Where it does not (every record written before that change), the report derives them
here, and only here, from what the record does carry: the claim key, the case's parameters (from the
registry's id pattern) and the quantity's name.  Each table below is keyed by the claim key and the
quantity's name (a regular expression; named groups become setting entries), so a renamed quantity
simply drops out of the constants table instead of being mislabelled.

* :data:`CONSTANTS`: which compared numbers are derived constants for the constants table, their
  symbol, and which quantity's verdict and margin decide them (``decided_by``).  ``kind`` is
  ``value`` (theory and measured are the constant itself), ``relative`` (the quantity already is
  ``measured/theory - 1``) or ``theory`` (only the theory value is the constant; the measured number
  belongs to another setting and is not shown as its measurement).
* :data:`RESOLUTIONS`: the symbol and meaning of each resolution parameter.
* :data:`RENAMES`: one symbol per meaning across the report, per claim group or claim key, applied when the
  records' words are typeset (the registry's statements stay as they are): the bias power, ``p`` in Theorem
  3.4's records and ``beta`` in the regularity law's, is ``zeta`` (``p_i`` are the softmax weights, ``beta`` the
  noise power); the bias and noise parts ``B(w), N(w)`` are ``\\mathcal{B}(w), \\mathcal{N}(w)`` (``B`` is the
  low-rank basis); ``P(...)`` is a probability ``\\mathbb{P}`` (``P`` the projector); ``L(...)``, ``Delta L`` the
  ICL loss ``\\mathcal{L}`` (``L`` the Lipschitz constant); the window law's ``C`` is ``C_d`` and its next-order
  exponent ``q`` is ``q'`` (``C`` is a proved inequality's constant, ``q`` the query); the low-rank claims write
  ``rho`` alone for the representation error ``rho(M, B)``, elsewhere ``rho`` is ``n L^2/sigma^2``.
* :data:`RESOLUTION_LETTERS`: a record's resolution symbol that is a letter meaning something else in the
  report (``s``, ``c``, ``x``, ``gamma``), printed as a resolution's own ``delta``.
* :data:`TASKS`: how a class name reads.
* :data:`FIGURES`: axis labels (mathtext) of the claims' figure data, the theory curve's legend entry,
  and ``transform="deviation"`` where a ratio to a law is better read as its distance to 1 on a log
  axis.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "ConstantSpec",
    "CONSTANTS",
    "RESOLUTIONS",
    "RENAMES",
    "TASKS",
    "FIGURES",
    "FIGURE_CAPTIONS",
    "CLASS_PARAMETERS",
    "PARAMETER_WORDS",
    "constant_spec",
    "resolution_symbol",
    "task_name",
    "rename_for",
    "resolution_letter",
    "RESOLUTION_LETTERS",
    "figure_axes",
]


@dataclass(frozen=True)
class ConstantSpec:
    """One derived constant a quantity name stands for (module docstring)."""

    pattern: str
    constant: str
    symbol: str
    decided_by: str | None = None
    kind: str = "value"
    note: str = ""

    def match(self, name: str):
        return re.search(self.pattern, name)


_WINDOW = (
    ConstantSpec(
        r"^C: w\*/rho\^alpha at the largest n$",
        "window-law constant",
        r"C_d",
        decided_by=r"^w\*/(law|\(C rho\^alpha\)) - 1",
        note=r"measured: $w^*/\Lambda^{\alpha}$ at the largest $n$",
    ),
    ConstantSpec(
        r"^local slope d log w\*/d log rho",
        "window-law exponent",
        r"\alpha",
        note=r"measured: local slope of $\log w^*$ in $\log\Lambda$ at the two largest $n$",
    ),
)
CONSTANTS: dict[str, tuple[ConstantSpec, ...]] = {
    "thm34.window-law": _WINDOW,
    "regularity.window-law": _WINDOW[:2],
    "regularity.window-law-rough": _WINDOW[:2],
    "thm34.bias-noise": (
        ConstantSpec(r"^bias power", "bias power (slope)", r"-\zeta", decided_by=r"^bias power"),
        ConstantSpec(r"^bias constant b", "bias constant", r"b_d", note=r"bias$/(L^2 w^{-\zeta})$ at the largest $w$"),
        ConstantSpec(r"^noise power", "noise power (slope)", r"\beta", decided_by=r"^noise power"),
        ConstantSpec(
            r"^noise constant c_R",
            "noise constant",
            r"c_R",
            note=r"$n\,$noise$/(\sigma^2 w^{\beta})$ at the largest $w$",
        ),
    ),
    "regularity.bias-power": (
        ConstantSpec(r"^bias power beta", "bias power", r"\zeta", decided_by=r"^bias power"),
        ConstantSpec(r"^bias constant b", "bias constant", r"b_d", note=r"bias $\cdot\, w^{\zeta}$ at the largest $w$"),
    ),
    "thm34.monotonicity": (
        ConstantSpec(
            r"^d log w\*/d log L$",
            r"elasticity $\partial\log w^*/\partial\log L$",
            r"\eta_L",
            decided_by=r"^d log w\*/d log L$",
        ),
        ConstantSpec(
            r"^d log w\*/d log n$",
            r"elasticity $\partial\log w^*/\partial\log n$",
            r"\eta_n",
            decided_by=r"^d log w\*/d log n$",
        ),
        ConstantSpec(
            r"^d log w\*/d log sigma$",
            r"elasticity $\partial\log w^*/\partial\log\sigma$",
            r"\eta_{\sigma}",
            decided_by=r"^d log w\*/d log sigma$",
        ),
    ),
    "thm34.trained-isotropy": (
        ConstantSpec(
            r"^tr\(M\)/d vs w\*$",
            "$w^*$ (Monte Carlo) vs trained $\\mathrm{tr}(M)/d$",
            r"w^*",
            decided_by=r"^tr\(M\)/d vs w\*$",
        ),
    ),
    "lemmaB1.block-scale": (
        ConstantSpec(
            r"^tr\(M\)/d vs exact w\*$",
            r"$w^*$ (exact) vs trained block's $\mathrm{tr}(M)/d$",
            r"w^*",
            decided_by=r"^tr\(M\)/d vs exact w\*$",
        ),
    ),
    "figures.fig3": (
        ConstantSpec(
            r"^\|\|M\|\|_2 at n=(?P<n>[\d.]+), sigma=(?P<sigma>[\d.]+), L=(?P<L>[\d.]+)$",
            r"$w^*$ (exact) vs trained $\|M\|_2$",
            r"w^*",
        ),
    ),
    "thm35.generalisation": (ConstantSpec(r"^w\* growth exponent", "window-law exponent (grid fit)", r"\alpha"),),
    "thm35.mismatch-marked": (
        ConstantSpec(
            r"^(?P<task>affine): error ratio (?P<mismatch>L'=\S+) / matched$",
            "error ratio, mismatched over matched $L$",
            r"E_{L'}/E_{L}",
            decided_by=r"^affine: error ratio",
        ),
    ),
    "linear.optimum": (
        ConstantSpec(
            r"^lim m\* \(n -> inf\)$",
            "linear optimum as $n\\to\\infty$",
            r"m^*_{\infty}",
            kind="theory",
            note="derived; equals $d$ for every $L$ and $\\sigma$",
        ),
        ConstantSpec(
            r"^m_hat / m\* - 1 at n=(?P<n>\d+)$",
            "linear optimum",
            r"m^*",
            kind="relative",
            decided_by=r"^m_hat / m\* - 1",
            note=r"measured: $\hat m$ by search, relative to $m^*$",
        ),
        ConstantSpec(
            r"^E\(m\* I\) / E_lin - 1 at n=(?P<n>\d+)$",
            "optimal linear error",
            r"E_{\mathrm{lin}}",
            kind="relative",
            decided_by=r"^E\(m\* I\) / E_lin - 1",
        ),
    ),
    "linear.trained": (
        ConstantSpec(
            r"^tr\(v M\)/d / m\* - 1$",
            "$m^*$ vs trained $\\mathrm{tr}(vM)/d$",
            r"m^*",
            kind="relative",
            decided_by=r"^tr\(v M\)/d / m\* - 1$",
        ),
    ),
    "linear.cannot-adapt": (
        ConstantSpec(
            r"^linear error limit k\(1\) - d B",
            "linear-attention error limit",
            r"K(1) - d\,\bar K",
            kind="theory",
            note="derived limit; the finite-$n$ error is compared in the row below",
        ),
        ConstantSpec(
            r"^E\(n=(?P<n>\d+)\) / \(k\(1\) - d B\) - 1$",
            "finite-$n$ error over limit",
            r"E_n/E_{\infty} - 1",
            decided_by=r"^E\(n=\d+\) / \(k\(1\) - d B\) - 1$",
            note="theory: the derived next-order term",
        ),
    ),
    "linear.window": (
        ConstantSpec(
            r"^d log width / d log L \(linear, m\*\)$", "linear window's elasticity in $L$", r"\eta_L^{\mathrm{lin}}"
        ),
        ConstantSpec(
            r"^d log width / d log L \(softmax, w\*\)$", "softmax window's elasticity in $L$", r"\eta_L^{\mathrm{soft}}"
        ),
    ),
    "thm44.direction": (ConstantSpec(r"^best scale c\* of c B B\^T$", r"best scale of $c\,BB^{\top}$", r"c^*"),),
    "thm44.direction-nonlinear": (
        ConstantSpec(r"^best scale c\* of c B B\^T$", r"best scale of $c\,BB^{\top}$", r"c^*"),
    ),
    "thm44.trained": (
        ConstantSpec(r"^trained scale tr\(PMP\)/k vs searched c\*$", r"$c^*$ vs trained $\mathrm{tr}(PMP)/k$", r"c^*"),
    ),
    "figures.fig6": (
        ConstantSpec(
            r"^centre of the attention of (?P<M>w\* I)",
            "centre of the attention weights",
            r"\theta_c",
            decided_by=r"^centre of the attention of w\* I",
        ),
        ConstantSpec(
            r"^centre of the attention of (?P<M>the general M)",
            "centre of the attention weights",
            r"\theta_c",
            decided_by=r"^centre of the attention of the general M",
        ),
    ),
}

# resolution parameter (as the records word it) -> (symbol, meaning in words)
RESOLUTIONS: dict[str, tuple[str, str]] = {
    "exponent shift delta": (r"\delta\alpha", r"shift of the exponent $\alpha$ of the law the rule refutes"),
    "bias power shift": (r"\delta\zeta", "shift of the bias power the rule refutes"),
    "shift of the bias power beta": (r"\delta\zeta", "shift of the bias power the rule refutes"),
    "elasticity beyond zero on the wrong side (L)": (
        r"\delta\eta",
        "elasticity on the wrong side of zero the rule refutes",
    ),
    "log scale factor eps on the base e^eps w* I": (
        r"\varepsilon",
        r"log scale factor: the base $e^{\varepsilon}w^*I$ "
        "is refuted as the optimum",
    ),
    "relative change of w*": (r"\delta w^*/w^*", r"relative change of $w^*$ the rule refutes"),
    "exponent shift delta: error <= n^-(alpha + delta)": (
        r"\delta",
        r"faster rate $n^{-(\alpha+\delta)}$ the rule refutes",
    ),
    "relative tightening delta: bias_c <= L^2 env_c / (1 + delta)": (
        r"\delta",
        "tightening of the envelope bound by $1+\\delta$ the rule refutes",
    ),
    "relative change c of the theory: (1 + c) sigma^2 (R_d/n + c_q w^(d-1)/n^2)": (
        r"\delta",
        "relative change of the derived noise part the rule refutes",
    ),
    "log error ratio s: the mismatched error exceeds exp(s) x the matched": (
        r"\delta",
        r"log error ratio: mismatched error $> e^{\delta}\times$ matched is refuted",
    ),
    "shift s of the required log factor": (r"\delta", "shift of the required log factor the rule refutes"),
    "shift s of the claimed log error ratio (relu@L over affine@L)": (
        r"\delta",
        "shift of the log error ratio the rule refutes",
    ),
    "relative change of m*": (r"\delta m^*/m^*", r"relative change of $m^*$ the rule refutes"),
    "relative shift of the base point m* I": (r"\delta", r"relative shift of the base point $m^*I$ the rule refutes"),
    "relative change of the limit k(1) - d B": (
        r"\delta",
        r"relative change of the limit $K(1)-d\bar K$ the rule refutes",
    ),
    "elasticity of the linear window width in L": (
        r"\delta\eta",
        "elasticity of the linear window in $L$ the rule refutes",
    ),
    "scale factor eps on c: base (1 + eps) c*": (
        r"\varepsilon",
        r"scale factor: the base $(1+\varepsilon)c^*$ is "
        "refuted as the optimum",
    ),
    "angle theta (radians) of col(B) tilted toward a random outside direction": (
        r"\theta",
        r"tilt of $\mathrm{col}(B)$ (radians) the rule refutes",
    ),
    "exponent gamma: low-rank error bound (1 + margin)(d/d_min)^-gamma": (
        r"\delta",
        r"decay exponent of the error bound in $d$ the rule refutes",
    ),
    "rate increase delta (bound -> bound^(1 + delta))": (
        r"\delta",
        r"sharpening of the bound to "
        r"$\mathrm{bound}^{1+\delta}$ the tails refute",
    ),
    "elasticity of the window width beyond zero on the wrong side": (
        r"\delta\eta",
        "elasticity of the window width on the wrong side the rule refutes",
    ),
    "change of E_class / E_cosine": (r"\delta", r"change of $E_{\mathrm{class}}/E_{\mathrm{cosine}}$ the rule refutes"),
    "rise of softmax's rho beyond zero": (r"\delta\rho", r"rise of $\rho(M,B)$ during pretraining the rule refutes"),
    "distance to the Eq. (4) form the rule refutes": (
        r"\delta",
        "distance to the Eq. (4) form refuted as a claim about the trained layers",
    ),
    "value leak the rule refutes as a claim about the trained layers": (
        r"\delta",
        "value leak refuted as a claim about the trained layers",
    ),
    "label coupling the rule refutes as a claim about the trained layers": (
        r"\delta",
        "label coupling refuted as a claim about the trained layers",
    ),
    "anisotropy of M the rule refutes as a claim about the trained layers": (
        r"\delta",
        "anisotropy of $M$ refuted as a claim about the trained layers",
    ),
    "offset of the attention centre of w* I from the query (radians)": (
        r"\theta",
        r"offset of the centre of $w^*I$'s attention (radians) the rule refutes",
    ),
}

# Keys: a claim group ("thm34") or a claim key ("loss_shape.bias-power", merged over its group's); per key, a letter
# or name as the records write it (renamed alone: p, never p_i or q'), a letter applied to an argument ("P(": the
# probability of P(N >= a), never the projector P), or a phrase (anything else: replaced as text by ASCII math, then
# typeset; mathtext.SYMBOLS names what no letter stands for: calL the ICL loss, calB and calN its bias and noise parts).
# A value is the symbol as LaTeX (or a letter of the records' ASCII math, or a SYMBOLS name).
RENAMES: dict[str, dict[str, str]] = {
    # the bias power is zeta (the records' beta is the noise power elsewhere, their p the softmax weights p_i); their
    # m = (d-1)/2 is the noise power beta; b the bias constant b_d; c, D1, D2 the kernel's coefficients of u^gamma,
    # u, u^2; k, q the bias part's next order (kappa is the window law's); C the window-law constant C_d; rho alone
    # is n/sigma^2 here, Lambda_0 (Lambda is n L^2/sigma^2: these priors have no L, their scale is in C_d)
    "regularity": {
        "beta": r"\zeta",
        "p": r"\zeta",
        "m": r"\beta",
        "b": "b_d",
        "c": r"c_\gamma",
        "D1": "c_1",
        "D2": "c_2",
        "k": r"\kappa_b",
        "q": "q'",
        "C": "C_d",
        "rho": r"\Lambda_0",
        "w*/law": "w*/(C rho^alpha)",
    },
    # there "rho" alone is the representation error rho(M, B), not Lambda; s is the step of a move along Q or the
    # scale (xi: s is the projection threshold of the tail bounds); L(...), Delta L, L'' are the ICL loss (L alone is
    # the Lipschitz constant); the curvature along Q is its second derivative (kappa is the window law's coefficient);
    # L_P, L_I the optimal low-rank and isotropic ICL errors
    "thm44": {
        "rho": r"\rho",
        "s": r"\xi",
        "L(": r"\mathcal{L}",
        "Delta L": "Delta calL",
        "L''": r"\mathcal{L}''",
        "d^2L/ds^2": "d^2calL/ds^2",
        "kappa_Q": r"\partial_\xi^2\mathcal{L}_Q",
        "L_P": r"\mathcal{L}_P",
        "L_I": r"\mathcal{L}_I",
    },
    # a normal law N(0, v) in words (N(w) is the noise part); R(angle) a rotation (R_d is the collision ratio); a
    # covariate's coordinates x^(j) (x_i is the i-th context point)
    "figures": {"rho": r"\rho", "N(0,": "Gaussian(0,", "R(": r"\mathrm{Rot}", "x_1..x_d": "x^((1))..x^((d))"},
    # the next-order coefficient of the window law is kappa (k is the rank of a low-rank class), its exponent q'
    # (the bias part's: q is the query), both keyed by the window-law claim below; the bias power zeta (p_i are the
    # softmax weights); "law" is the window law C_d Lambda^alpha (a phrase: replaced as text, then typeset);
    # Delta L is a change of the loss
    "thm34": {
        "p": r"\zeta",
        "C": "C_d",
        "w*/law": "w*/(C_d rho^alpha)",
        "Delta L": "Delta calL",
    },
    # only where the window law's next order is written: k, q elsewhere are a rank and the query
    "thm34.window-law": {"k": r"\kappa", "q": "q'"},
    # the window law's constant (C alone is the constant of a proved inequality)
    "thm35": {"C": "C_d"},
    # the linear group's task covariance k(s) and its moment B = E_t[t k(t)] (B is the low-rank basis elsewhere);
    # m_hat the searched optimum
    "linear": {"k": "K", "B": r"\bar K", "m_hat": r"\hat m"},
    # Dasgupta and Gupta's beta = s d/k (beta is the noise power elsewhere); P(...) a probability (P alone is the
    # projector); D the relative entropy (D_j are the isotropy probe's directions); x in 1 + x <= e^x a real number
    # (x is a point of the sphere); the locked alternatives' "Levy's" with its accent
    "concentration": {
        "beta": r"\tau",
        "P(": r"\mathbb{P}",
        "D": r"\mathrm{KL}",
        "1 + x <= e^x": "1 + chi <= e^chi",
        "Levy's": "L\u00e9vy's",
    },
    # the multiplicative Chernoff bound's relative deviation (delta is a claim's resolution)
    "concentration.cap-counts-multiplicative": {"delta": "r"},
    # the points where the bias part falls and rises (grid parameters falls_at, rises_at); the bias and noise parts
    # (B is the low-rank basis); dL/dw the loss's slope
    "loss_shape": {
        "falls_at": r"w_{\mathrm{fall}}",
        "rises_at": r"w_{\mathrm{rise}}",
        "B": r"\mathcal{B}",
        "N": r"\mathcal{N}",
        "B'": r"\mathcal{B}'",
        "N'": r"\mathcal{N}'",
        "dL/dw": "dcalL/dw",
    },
    # the bias power (p alone is the softmax weights' vector elsewhere in the group: Cov_p(p, t))
    "loss_shape.bias-power": {"p": r"\zeta"},
}

# a resolution symbol of the records that is a letter meaning something else in the report (s the projection
# threshold, c the scale of c B B^T, x a point of the sphere, gamma the regularity law's kernel power, a the count
# threshold, t = x.q, f a task function) -> the
# resolution's own symbol; its meaning's words are typeset with the same rename
RESOLUTION_LETTERS: dict[str, str] = {
    "s": r"\delta",
    "c": r"\delta",
    "x": r"\delta",
    r"\gamma": r"\delta",
    "a": r"\delta",  # the count threshold of the cap bounds
    "t": r"\delta",  # t = x.q
    "f": r"\delta",  # a task function
}

# claim key -> ((regular expression on the figure data's ylabel, axes), ...)
FIGURES: dict[str, tuple] = {
    "thm34.window-law": (
        (
            r"w\^\*\s*/\s*\(C",
            {
                "xlabel": r"$\Lambda = nL^2/\sigma^2$",
                "ylabel": r"$w^*/(C_d\Lambda^{\alpha})$",
                "theory": r"derived $1 + \kappa\,w_0^{-q'}$",
            },
        ),
    ),
    "regularity.window-law": (
        (r"w\^\*\s*/\s*\(C", {"xlabel": r"$n/\sigma^2$", "ylabel": r"$w^*/(C_d\,(n/\sigma^2)^{\alpha})$"}),
    ),
    "regularity.window-law-rough": (
        (r"w\^\*\s*/\s*\(C", {"xlabel": r"$\Lambda_0 = n/\sigma^2$", "ylabel": r"$w^*/(C_d\,\Lambda_0^{\alpha})$"}),
    ),
    "thm34.bias-noise": (
        (
            r"^large-n bias",
            {"xlabel": "$w$", "ylabel": "large-$n$ bias part", "theory": r"theory $b_d L^2 w^{-\zeta}$"},
        ),
        (
            r"^n E sum",
            {"xlabel": "$w$", "ylabel": r"$n\,\mathbb{E}\sum_i p_i^2$", "theory": r"theory $c_R\,w^{\beta}$"},
        ),
    ),
    "thm34.monotonicity": (
        (r"", {"xlabel": r"factor on $L$, $n$ or $\sigma$", "ylabel": r"$w^* / w^*_{\mathrm{base}}$"}),
    ),
    "thm34.isotropy": (
        (
            r"",
            {
                "xlabel": r"move from $w^*I$: 1-3 along $+D_j$, 4-6 along $-D_j$, 7-8 scale up, down",
                "ylabel": r"loss change $\Delta\mathcal{L}$",
                "log_y": True,
                "dodge": True,
            },
        ),
    ),
    "thm35.generalisation": ((r"", {"xlabel": "context size $n$", "ylabel": "ICL error"}),),
    "linear.cannot-adapt": (
        (r"", {"xlabel": "context size $n$", "ylabel": "ICL error", "theory": r"derived $E_{\mathrm{lin}}(n)$"}),
    ),
    "thm44.saddle": (
        (
            r"",
            {
                "xlabel": r"derived $\partial_\xi^2\mathcal{L}_Q$",
                "ylabel": r"measured $2\Delta_Q/\xi^2$",
            },
        ),
    ),
    "concentration.projection-tails": ((r"", {"xlabel": "$s$", "ylabel": r"$\mathbb{P}(\|Px\|^2 \geq s)$"}),),
    "concentration.projection-tails-sharp": ((r"", {"xlabel": "$s$", "ylabel": r"$\mathbb{P}(\|Px\|^2 \geq s)$"}),),
    "concentration.cap-probability": ((r"", {"xlabel": "$h$", "ylabel": r"$\mathbb{P}(x\cdot q \geq h)$"}),),
    "concentration.levy-exact": ((r"", {"xlabel": "$t$", "ylabel": r"$\mathbb{P}(x\cdot q \geq t)$"}),),
    "concentration.levy-monte-carlo": ((r"P\(x", {"xlabel": "$t$", "ylabel": r"$\mathbb{P}(x\cdot q \geq t)$"}),),
    "concentration.softmax-normaliser": ((r"", {"xlabel": "$t$", "ylabel": r"$\mathbb{P}(Z_n - \Phi_d(w) \geq t)$"}),),
    "thm44.dimension": (
        (
            r"",
            {
                "xlabel": "dimension $d$",
                "ylabel": "optimal ICL error",
                "theory": r"$d$-free limit $\mathcal{L}_P(\infty)$",
            },
        ),
    ),
}

# words a claim's figure needs beside its axis labels (LaTeX, appended to the caption)
FIGURE_CAPTIONS: dict[str, str] = {
    "concentration.projection-tails": (
        r"Drawn: the upper tail $\mathbb{P}(\|Px\|^2 \ge s)$ of each case and its stated bound; the lower tail and the "
        r"sharp form are proved (Section~\ref{sec:proofs}) but not drawn."
    ),
    "thm34.window-law": (
        r"$w_0 = C_d\Lambda^{\alpha}$; an asymptotic (large-$w_0$) term, not a prediction at small $\Lambda$: "
        r"the note under the table says where it matches the data."
    ),
    "thm34.isotropy": (
        r"Moves 1-3: $w^*I + \xi\|w^*I\|_F D_j$ along three unit-Frobenius directions orthogonal to $I$ "
        r"($D_1$ symmetric traceless, $D_2$ antisymmetric, $D_3$ rank-one traceless); moves 4-6: along $-D_j$; "
        r"moves 7, 8: $e^{\pm\xi}w^*I$; $\Delta\mathcal{L}$ the loss change with its interval "
        r"($\xi$ the registry's step)."
    ),
    "thm34.bias-noise": (
        r"The noise part does not depend on the task class: a series equal for both classes is drawn once, in "
        r"the first class's colour."
    ),
    "thm44.saddle": (
        r"Axes: $\Delta_Q = \tfrac12[\mathcal{L}(c^*BB^{\top} + \xi Q) + \mathcal{L}(c^*BB^{\top} - \xi Q)] - "
        r"\mathcal{L}(c^*BB^{\top})$, so $2\Delta_Q/\xi^2$ is the measured curvature along $Q$ (a finite difference; "
        r"bars: its confidence interval), against the derived $\partial_\xi^2\mathcal{L}_Q$."
    ),
}

CLASS_PARAMETERS = ("task", "link", "kernel")  # parameters whose values are class names
PARAMETER_WORDS = {"train_task": "pretrained on {}", "mismatch": "{}", "M": "{}"}  # parameters read as words
TASKS = {
    "lowrank-linear": "low-rank linear",
    "lowrank-affine": "low-rank affine",
    "lowrank-quadratic": "low-rank quadratic",
    "lowrank-cosine": "low-rank cosine",
    "relu": "ReLU",
    "matern32": r"Matérn-3/2",
}


def constant_spec(key: str, name: str):
    """``(spec, match, index in the claim's list)`` for a quantity ``name`` of claim ``key``, or ``None``."""
    for i, spec in enumerate(CONSTANTS.get(key, ())):
        m = spec.match(name)
        if m:
            return spec, m, i
    return None


def resolution_symbol(parameter: str) -> tuple[str, str]:
    """``(symbol, meaning)`` of a resolution parameter worded as the records word it; an unknown one
    reads as ``\\delta`` with its own words as the meaning."""
    return RESOLUTIONS.get(parameter, (r"\delta", parameter))


def task_name(task: str) -> str:
    return TASKS.get(task, task)


def figure_axes(key: str, ylabel: str) -> dict:
    """The axes entry of :data:`FIGURES` for a claim's figure data with this ``ylabel`` (``{}`` if none)."""
    for pattern, axes in FIGURES.get(key, ()):
        if re.search(pattern, ylabel):
            return axes
    return {}


def rename_for(key_or_group: str) -> dict:
    """The renames (:data:`RENAMES`) of a claim key: its group's, with the key's own over them."""
    key = str(key_or_group)
    return {**RENAMES.get(key.split(".")[0], {}), **RENAMES.get(key, {})}


def resolution_letter(symbol: str) -> tuple[str, dict]:
    """``(symbol, rename)``: a record's resolution symbol as the report prints it (:data:`RESOLUTION_LETTERS`) and
    the rename its meaning's words need (``{"s": "\\delta"}`` for ``s``; ``{}`` for a symbol kept)."""
    shown = RESOLUTION_LETTERS.get(symbol.strip())
    if shown is None:
        return symbol, {}
    return shown, {symbol.strip().lstrip("\\"): shown}
