"""The paper's figures: the renderers (paperfigs) on data of the documented form, the helpers of the
figures claims, and the ``lipschitz-icl figures`` command (files, exit codes, nothing written outside
``--out``)."""

import json

import numpy as np
import pytest

from lipschitz_icl import paperfigs
from lipschitz_icl.attention import Attention
from lipschitz_icl.claims import figures
from lipschitz_icl.cli import main
from lipschitz_icl.problem import make_problem


def _synthetic(name):
    """Figure data of the documented form (shapes only; values arbitrary)."""
    steps = [0, 10, 20]
    if name == "fig1":
        a = list(np.linspace(-3, 3, 7))
        return {"name": "fig1", "title": "t", "settings": {"n": 5}, "L": [1.0, 2.0], "window": [0.5, 0.3],
                "angle": a, "context_angle": [0.1, 1.0], "query_angle": 0.0, "curves": [a, a],
                "context_y": [[0.0, 1.0]] * 2, "query_f": [0.0, 0.0], "softmax_weights": [a, a],
                "linear_weights": [a, a], "n_grid": [10.0, 100.0], "softmax_error": [[1.0, 0.1]] * 2,
                "linear_error": [[1.0, 0.9]] * 2}
    if name == "fig3":
        return {"name": "fig3", "settings": {}, "series": [{"label": "n=2", "L": [0.5, 1.0], "norm_mean": [1, 2],
                                                            "norm_runs": [[1, 1.1], [2, 2.1]], "w_star": [1, 2]}]}
    if name == "fig5":
        cur = {"steps": steps, "error": [0.3, 0.1, 0.05], "se": [0.01] * 3}
        return {"name": "fig5", "settings": {}, "curves": {"affine": cur, "cosine": cur},
                "cross": {"pretrained_on": ["affine", "cosine"], "error": [0.05, 0.05]}}
    if name == "fig9":
        kind = {"steps": steps, "rho": [[0.9, 0.5, 0.1]], "error": [[0.3, 0.1, 0.05]]}
        return {"name": "fig9", "settings": {}, "series": {"affine": {"softmax": kind, "linear": kind}}}
    return {"name": "eq4", "settings": {}, "d": [2], "matrices": [np.eye(3).tolist()], "distance": [[0.01]]}


@pytest.mark.parametrize("name", sorted(paperfigs.RENDERERS))
def test_every_renderer_writes_a_pdf_and_a_png_with_labelled_axes(name, tmp_path):
    fig = paperfigs.render(_synthetic(name))
    labelled = [ax for ax in fig.axes if ax.get_xlabel() or ax.get_ylabel()]
    assert labelled, "no axis is labelled"
    pdf, png = paperfigs.write(fig, tmp_path, name)
    assert open(pdf, "rb").read(5) == b"%PDF-" and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_caption_lists_every_setting():
    assert paperfigs.caption({"settings": {"d": 2, "n": [10, 20]}}) == "d: 2; n: [10, 20]"


def test_paired_ratio_of_a_model_with_itself_is_one_and_sees_a_worse_window():
    problem = make_problem("cosine", 2, 20, 1.0, 0.3)
    stream = np.random.SeedSequence(5)
    errors, ratios, ses = figures.paired_ratio(problem, [Attention.isotropic(4.0, 2), Attention.isotropic(4.0, 2)],
                                               500, stream)
    assert ratios[0] == pytest.approx(1.0) and ses[0] == pytest.approx(0.0, abs=1e-12)
    _, ratios, ses = figures.paired_ratio(problem, [Attention.isotropic(0.5, 2), Attention.isotropic(4.0, 2)],
                                          500, stream)
    assert ratios[0] - 4 * ses[0] > 1.0  # a window 8x too wide is worse, beyond its interval


def test_pretraining_curve_records_a_falling_error_on_common_test_contexts():
    problem = make_problem("affine", 2, 20, 1.0, 0.3)
    steps, errors, ses, Ms, _ = figures.pretraining_curve(problem, np.random.SeedSequence(3), segments=2,
                                                          segment_steps=40, test_contexts=500)
    assert steps == [0, 40, 80] and len(Ms) == 3
    assert errors[-1] + 4 * ses[-1] < errors[0] - 4 * ses[0]


def test_figure1_data_is_json_serialisable_and_decided():
    ev = figures.figure1(n_grid=(10, 100), seed=np.random.SeedSequence(1))
    json.dumps(ev.figure)
    assert ev.rule_name == "sign" and ev.verdict == "holds" and ev.power == (1, 1)
    assert ev.figure["window"] == sorted(ev.figure["window"], reverse=True)


def test_command_rejects_unknown_names_and_existing_files(tmp_path, capsys):
    assert main(["figures", "--out", str(tmp_path), "--only", "fig2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--only" in err[0]
    (tmp_path / "fig1.png").write_bytes(b"")
    assert main(["figures", "--out", str(tmp_path), "--only", "fig1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--force" in err[0]


def test_command_writes_the_figure_only_under_out(tmp_path, capsys, monkeypatch):
    full = figures.figure1
    monkeypatch.setattr(figures, "figure1", lambda **kw: full(**{**kw, "n_grid": (10, 100)}))  # cheaper grid
    out = tmp_path / "figs"
    assert main(["figures", "--out", str(out), "--only", "fig1", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    entry, = payload["figures"]
    assert set(entry) == {"name", "files", "settings", "verdict"} and entry["verdict"] == "holds"
    assert sorted(p.name for p in out.iterdir()) == ["fig1.json", "fig1.pdf", "fig1.png"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figs"]
    assert json.loads((out / "fig1.json").read_text())["figure"]["name"] == "fig1"
    assert main(["figures", "--out", str(out), "--only", "fig1", "--force", "--json"]) == 0
