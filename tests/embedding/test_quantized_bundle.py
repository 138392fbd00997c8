"""The int8-MatMul model reaches the PyInstaller bundle when it has been built."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.memory.embedding.local import DYNAMIC_INT8_MODEL_FILE, dynamic_int8_model_path

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "packaging" / "engram.spec"


def load_spec() -> dict[str, object]:
    """Run the spec's helpers without PyInstaller (as tests/packaging does)."""
    namespace: dict[str, object] = {"__file__": str(SPEC), "__name__": "engram_spec", "SPECPATH": str(SPEC.parent)}
    exec(compile(SPEC.read_text(encoding="utf-8"), str(SPEC), "exec"), namespace)
    return namespace


@pytest.mark.skipif(not dynamic_int8_model_path().is_file(), reason="model.int8.onnx not built")
def test_int8_model_is_bundled_where_the_app_looks_for_it() -> None:
    datas = load_spec()["resource_datas"]()  # type: ignore[operator]
    model = ROOT / "resources" / "models" / "all-minilm-l6-v2" / DYNAMIC_INT8_MODEL_FILE
    # resource_path() resolves to <bundle>/resources/models/all-minilm-l6-v2/ in a frozen app.
    assert (str(model), "resources/models/all-minilm-l6-v2") in datas
    assert not any(src.endswith(".tmp") for src, _ in datas)
