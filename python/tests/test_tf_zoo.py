"""The TensorFlow model zoo (tests/tf_zoo): every model, every way it was
exported, through the CLI, Python and the C API, against TensorFlow's own
outputs.

A model and way known not to run yet is listed, with the reason, in
tests/tf_zoo/expected_failures.json; it is an expected failure that turns
into a test failure when it starts to match, so the list (and the coverage
table made from it, docs/tf_zoo_coverage.md) stays true. Models generated
outside the repository (the Keras applications) run too when
PLEXUS_TF_ZOO_EXTRA names their folder.
"""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tf_zoo_runner as zoo  # noqa: E402

EXPECTED_FILE = Path(__file__).resolve().parents[2] / "tests" / "tf_zoo" / "expected_failures.json"


def _expected() -> dict:
    if not EXPECTED_FILE.exists():
        return {}
    return json.loads(EXPECTED_FILE.read_text())


def _cases():
    models = zoo.find_models(zoo.zoo_roots())
    expected = _expected()
    cases = []
    for model in models:
        known = expected.get(model.id, {})
        for way in model.ways():
            reason = known.get(way, known.get("*"))
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            cases.append(pytest.param(model, way, id=f"{model.id}:{way}", marks=marks))
    return cases


CASES = _cases()


@pytest.mark.skipif(not CASES, reason="no zoo models found (tests/data/tf_zoo is missing)")
@pytest.mark.parametrize("model,way", CASES)
def test_zoo_model_matches_tensorflow(model, way):
    ok, message = zoo.run_way(model, way)
    assert ok, f"{model.id} ({way}): {message}"


def test_expected_failures_name_real_models_and_ways():
    """Every entry of expected_failures.json names a model and way of the zoo
    (a stale entry would hide a regression or misstate the coverage)."""
    models = {m.id: m for m in zoo.find_models(zoo.zoo_roots())}
    for model_id, ways in _expected().items():
        if model_id.split("/")[0] == "applications" and model_id not in models:
            continue  # generated outside the repository; runs only when present
        assert model_id in models, f"expected_failures.json names {model_id}, which is not in the zoo"
        for way, reason in ways.items():
            assert reason.strip(), f"{model_id} {way}: give the reason"
            assert way == "*" or way in models[model_id].ways(), f"{model_id}: no way {way}"
