"""tests/field_models.py: the field's models are found in their pinned trees, and a tree
at another commit, or without the file, is said to be so rather than tested."""

from __future__ import annotations

from pathlib import Path

import field_models
import pytest


def test_unset_tree_says_where_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TINYENGINE_SOURCE_DIR", raising=False)
    why = field_models.locate("vww")
    assert isinstance(why, str) and "TINYENGINE_SOURCE_DIR is not set" in why
    assert "mit-han-lab/tinyengine at 47bb283c" in why


def test_other_bytes_are_not_the_pinned_model(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    path = tmp_path / "assets" / "vww.tflite"
    path.parent.mkdir()
    path.write_bytes(b"TFL3 not the model")
    monkeypatch.setenv("TINYENGINE_SOURCE_DIR", str(tmp_path))
    why = field_models.locate("vww")
    assert isinstance(why, str) and "is not the pinned model" in why
    path.unlink()
    assert "has no assets/vww.tflite" in str(field_models.locate("vww"))


def test_every_model_has_a_pin() -> None:
    assert set(field_models.SHA256) == set(field_models.MODELS)
    assert {var for var, _ in field_models.MODELS.values()} <= set(field_models.TREES)
