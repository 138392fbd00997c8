"""The build-time graph rewrite of packaging/quantize_model.py: one key transpose per attention layer."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from desktop.memory.embedding.local import dynamic_int8_model_path

ROOT = Path(__file__).resolve().parents[2]


def _quantize_module():
    spec = importlib.util.spec_from_file_location("engram_quantize_model", ROOT / "packaging" / "quantize_model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _key_chain_model() -> onnx.ModelProto:
    """keys [B, S, H, D] -> the exporter's four-node chain -> [B, H, D, S], as in every layer."""
    b, s, h, d = 2, 5, 3, 4
    shape_1 = numpy_helper.from_array(np.array([b * h, s, d], dtype=np.int64), "shape_1")
    shape_2 = numpy_helper.from_array(np.array([b, h, d, s], dtype=np.int64), "shape_2")
    nodes = [
        helper.make_node("Transpose", ["keys"], ["t1"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["t1", "shape_1"], ["r1"]),
        helper.make_node("Transpose", ["r1"], ["t2"], perm=[0, 2, 1]),
        helper.make_node("Reshape", ["t2", "shape_2"], ["out"]),
    ]
    graph = helper.make_graph(nodes, "keys", [helper.make_tensor_value_info("keys", TensorProto.FLOAT, [b, s, h, d])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [b, h, d, s])],
                              [shape_1, shape_2])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _run(model: onnx.ModelProto, keys: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"keys": keys})[0]


def test_the_key_chain_becomes_one_transpose_with_the_same_tensor() -> None:
    quantize_model = _quantize_module()
    model = _key_chain_model()
    keys = np.random.default_rng(3).standard_normal((2, 5, 3, 4)).astype(np.float32)
    before = _run(model, keys)
    assert quantize_model.fuse_key_transposes(model) == 1
    assert [n.op_type for n in model.graph.node] == ["Transpose"]
    assert not model.graph.initializer  # the reshapes' shapes went with them
    assert np.array_equal(_run(model, keys), before)


def test_other_transposes_are_left_alone() -> None:
    quantize_model = _quantize_module()
    model = _key_chain_model()
    model.graph.node[0].attribute[0].ints[:] = [0, 1, 2, 3]  # not the exporter's head transpose
    assert quantize_model.fuse_key_transposes(model) == 0
    assert len(model.graph.node) == 4


@pytest.mark.skipif(not dynamic_int8_model_path().is_file(), reason="model.int8.onnx not built")
def test_the_built_model_has_one_key_transpose_per_layer() -> None:
    model = onnx.load(str(dynamic_int8_model_path()), load_external_data=False)
    perms = [list(a.ints) for n in model.graph.node if n.op_type == "Transpose" for a in n.attribute]
    assert perms.count([0, 2, 3, 1]) == 6 and [0, 2, 1] not in perms


def test_bootstrap_rebuilds_a_model_of_an_older_recipe() -> None:
    """scripts/bootstrap.sh greps the built model for part of RECIPE; the two must not drift apart."""
    quantize_model = _quantize_module()
    script = (ROOT / "scripts" / "bootstrap.sh").read_text(encoding="utf-8")
    needle = script.split('grep -qF "', 1)[1].split('"', 1)[0]
    assert needle and needle in quantize_model.RECIPE


def test_built_recipe_reads_what_quantize_records(tmp_path: Path) -> None:
    quantize_model = _quantize_module()
    model = _key_chain_model()
    assert quantize_model.built_recipe(tmp_path / "missing.onnx") is None
    entry = model.metadata_props.add()
    entry.key, entry.value = quantize_model.METADATA_KEY, quantize_model.RECIPE
    onnx.save(model, str(tmp_path / "m.onnx"))
    assert quantize_model.built_recipe(tmp_path / "m.onnx") == quantize_model.RECIPE
