"""The identifier's per-cell outputs, added to an exported ONNX graph (needs `onnx`, the `train`
extra; not torch).

The identifier's embedding is `normalise(W · [flatten(R), mean(Z)] + b)`, where `Z` (n, C, h, w)
is the last feature map and `R` (n, K, h, w) its 1×1 reduction (`IdentifierNet.forward`). That
is a sum over the map's h × w cells: `Σ_c W_R[c] · R[:, c] + Σ_c (W_Z · Z[:, c] + b) / (h w)`.
Two extra outputs hold those terms per cell, `cell_layout` (n, h w, dim) = `W_R[c] · R[:, c]` and
`cell_content` (n, h w, dim) = `W_Z · Z[:, c] + b`, and the metadata key `cardtrack.cells` the
grid (`"7x5"`: rows × columns). The runtime then embeds the visible part of a covered card from
them alone (`vision.identify.masked_embeddings`): the same sums over the visible cells, the
content's mean over those cells. With every cell visible that is the model's own embedding,
which `add_cell_outputs` checks on random inputs before it writes anything.

`python -m vision.train.cells MODEL.onnx [OUT.onnx]` adds them to a model exported before they
existed; `cardtrack train identifier` adds them to every model it writes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from vision.identify import CELL_CONTENT as CONTENT_OUTPUT
from vision.identify import CELL_LAYOUT as LAYOUT_OUTPUT
from vision.identify import CELLS_KEY, IdentifierError, masked_embeddings


def _producer(graph: Any, name: str) -> Any:
    for node in graph.node:
        if name in node.output:
            return node
    raise IdentifierError(f"the identifier graph has no node that makes {name!r}")


def _shape_of(model: Any, name: str) -> tuple[int, ...]:
    import onnx

    inferred = onnx.shape_inference.infer_shapes(model)
    for info in (*inferred.graph.value_info, *inferred.graph.output):
        if info.name == name:
            return tuple(d.dim_value for d in info.type.tensor_type.shape.dim)
    raise IdentifierError(f"the identifier graph does not tell the shape of {name!r}")


def add_cell_outputs(model: Any) -> Any:
    """A copy of the identifier's ONNX model (an `onnx.ModelProto` exported from
    `IdentifierNet`) with the outputs `cell_layout` and `cell_content` and the grid in its
    metadata (module docstring). A model that has them already is returned as it is."""
    import onnx
    from onnx import helper, numpy_helper

    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    if any(o.name == LAYOUT_OUTPUT for o in graph.output):
        return out
    gemms = [n for n in graph.node if n.op_type == "Gemm"]
    if len(gemms) != 1:
        raise IdentifierError(f"expected one Gemm (the embedding layer) in the identifier graph, found {len(gemms)}")
    gemm = gemms[0]
    attrs = {a.name: helper.get_attribute_value(a) for a in gemm.attribute}
    inits = {i.name: i for i in graph.initializer}
    if gemm.input[1] not in inits or len(gemm.input) < 3 or gemm.input[2] not in inits:
        raise IdentifierError("the identifier's embedding layer has no stored weights and bias")
    weight = numpy_helper.to_array(inits[gemm.input[1]]).astype(np.float32)
    if not attrs.get("transB", 0):
        weight = weight.T
    concat = _producer(graph, gemm.input[0])
    if concat.op_type != "Concat" or len(concat.input) != 2:
        raise IdentifierError("the identifier's embedding layer does not read [layout, content]")
    flatten, mean = _producer(graph, concat.input[0]), _producer(graph, concat.input[1])
    if flatten.op_type != "Flatten" or mean.op_type != "ReduceMean":
        raise IdentifierError("the identifier's embedding layer does not read [flatten(map), mean(map)]")
    r_name, z_name = flatten.input[0], mean.input[0]
    _, k, h, w = _shape_of(out, r_name)
    _, c, h2, w2 = _shape_of(out, z_name)
    dim = weight.shape[0]
    if (h, w) != (h2, w2) or weight.shape[1] != k * h * w + c:
        raise IdentifierError(
            f"the identifier's maps ({k}×{h}×{w}, {c}×{h2}×{w2}) do not fit its embedding layer {weight.shape}"
        )
    cells = h * w
    # The weights are sliced out of the embedding layer's own initializer, not copied.
    consts = {
        "cells/starts_r": np.array([0], np.int64), "cells/ends_r": np.array([k * cells], np.int64),
        "cells/starts_z": np.array([k * cells], np.int64), "cells/ends_z": np.array([k * cells + c], np.int64),
        "cells/axis": np.array([1], np.int64),
        "cells/shape_w": np.array([dim, k, cells], np.int64),
        "cells/shape_r": np.array([0, k, cells], np.int64), "cells/shape_z": np.array([0, c, cells], np.int64),
    }
    graph.initializer.extend(numpy_helper.from_array(v, name) for name, v in consts.items())
    w_name = gemm.input[1]
    if not attrs.get("transB", 0):
        graph.node.append(helper.make_node("Transpose", [w_name], ["cells/w"], perm=[1, 0]))
        w_name = "cells/w"
    graph.node.extend([
        helper.make_node("Slice", [w_name, "cells/starts_r", "cells/ends_r", "cells/axis"], ["cells/w_flat"]),
        helper.make_node("Reshape", ["cells/w_flat", "cells/shape_w"], ["cells/w_layout"]),
        helper.make_node("Slice", [w_name, "cells/starts_z", "cells/ends_z", "cells/axis"], ["cells/w_content"]),
        helper.make_node("Reshape", [r_name, "cells/shape_r"], ["cells/r"]),
        helper.make_node("Einsum", ["cells/r", "cells/w_layout"], [LAYOUT_OUTPUT], equation="nkc,dkc->ncd"),
        helper.make_node("Reshape", [z_name, "cells/shape_z"], ["cells/z"]),
        helper.make_node("Einsum", ["cells/z", "cells/w_content"], ["cells/zw"], equation="nkc,dk->ncd"),
        helper.make_node("Add", ["cells/zw", gemm.input[2]], [CONTENT_OUTPUT]),
    ])
    for name in (LAYOUT_OUTPUT, CONTENT_OUTPUT):
        graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, ["n", cells, dim]))
    for entry in out.metadata_props:
        if entry.key == CELLS_KEY:
            entry.value = f"{h}x{w}"
            break
    else:
        entry = out.metadata_props.add()
        entry.key, entry.value = CELLS_KEY, f"{h}x{w}"
    onnx.checker.check_model(out)
    diff = cell_difference(out)
    if not diff <= 1e-4:
        raise IdentifierError(f"the per-cell outputs miss the embedding by {diff:.2e} (> 1e-4)")
    return out


def cell_difference(model: Any, *, n: int = 3, seed: int = 0) -> float:
    """Largest difference between the model's embeddings and those summed from its cells with
    every cell visible, on random inputs."""
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    shape = session.get_inputs()[0].shape
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 1.0, (n, *shape[1:])).astype(np.float32)
    emb, layout, content = session.run(["embeddings", LAYOUT_OUTPUT, CONTENT_OUTPUT], {session.get_inputs()[0].name: x})
    every = np.ones((1, layout.shape[1]), np.float32)
    summed = masked_embeddings(layout.transpose(1, 0, 2), content.transpose(1, 0, 2), every)[0]
    return float(np.abs(summed - emb).max())


def add_cell_outputs_file(path: str | Path, out: str | Path | None = None) -> Path:
    """`add_cell_outputs` on a model file, written to `out` (default: in place)."""
    import onnx

    src = Path(path)
    dst = Path(out) if out is not None else src
    model = add_cell_outputs(onnx.load(str(src)))
    tmp = dst.with_name(f".{dst.name}.tmp")
    onnx.save(model, str(tmp))
    os.replace(tmp, dst)
    return dst


def main(argv: list[str]) -> int:
    """`python -m vision.train.cells MODEL.onnx [OUT.onnx]`: add the outputs (a model that has
    them is left as it is) and print how far their sum is from the model's embedding."""
    import onnx

    if len(argv) not in (1, 2):
        sys.stderr.write("usage: python -m vision.train.cells MODEL.onnx [OUT.onnx]\n")
        return 2
    try:
        out = add_cell_outputs_file(*argv)
    except (OSError, IdentifierError) as exc:
        sys.stderr.write(f"{argv[0]}: {exc}\n")
        return 1
    diff = cell_difference(onnx.load(str(out)))
    sys.stdout.write(f"{out}: per-cell outputs sum to the embedding within {diff:.1e}\n")
    return 0


if __name__ == "__main__":  # pragma: no cover - a maintenance command
    sys.exit(main(sys.argv[1:]))
