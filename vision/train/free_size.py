"""The finder's input size made free in an exported ONNX graph (needs `onnx`, the `train`
extra; not torch).

The finder is fully convolutional: it was trained on 320×192 windows and reads 640×384
letterboxes, and its two upsamplings scale by a factor, not to a size. A graph exported with a
fixed 384×640 input still refuses any other size, so reading a part of a frame closer
(`vision.finder.Finder.find_zoomed`) would cost a whole 640×384 pass per part. This names the
input's and the outputs' height and width instead of fixing them; the weights are untouched.
Before writing anything it checks, with onnxruntime on fixed random inputs, that the new graph
gives the old one's outputs at 640×384 exactly and reads another size.

`python -m vision.train.free_size MODEL.onnx [OUT.onnx]` frees a model exported before
`cardtrack train finder` exported free sizes itself (OUT defaults to MODEL, rewritten).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from vision.finder import SIZE_STEP, FinderModelError
from vision.letterbox import INPUT_HEIGHT, INPUT_WIDTH, STRIDE

DIM_NAMES = (("height", "width"), ("rows", "columns"))  # the input's, the outputs'


def _free(value_info: Any, names: tuple[str, str]) -> None:
    dims = value_info.type.tensor_type.shape.dim
    if len(dims) != 4:
        raise FinderModelError(f"{value_info.name!r} has {len(dims)} dimensions, not (N, C, H, W)")
    for dim, name in zip(dims[2:], names, strict=True):
        dim.ClearField("dim_value")
        dim.dim_param = name


def _session(model: Any) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), sess_options=options,
                                providers=["CPUExecutionProvider"])


def free_input_size(model: Any) -> tuple[Any, float]:
    """A copy of the finder graph `model` with free height and width, and the largest difference
    of its outputs from the original's at 640×384 (raises when it cannot read another size)."""
    import onnx

    if len(model.graph.input) != 1 or len(model.graph.output) != 2:
        raise FinderModelError("not a finder graph: expected one input (image) and two outputs (heatmap, offsets)")
    free = onnx.ModelProto()
    free.CopyFrom(model)
    _free(free.graph.input[0], DIM_NAMES[0])
    for out in free.graph.output:
        _free(out, DIM_NAMES[1])
    del free.graph.value_info[:]  # inferred shapes of the fixed graph; onnxruntime infers its own
    onnx.checker.check_model(free)
    name = model.graph.input[0].name
    rng = np.random.default_rng(0)
    x = rng.random((1, 3, INPUT_HEIGHT, INPUT_WIDTH), np.float32)
    before, after = _session(model).run(None, {name: x}), _session(free).run(None, {name: x})
    diff = max(float(np.abs(a - b).max()) for a, b in zip(before, after, strict=True))
    h, w = 3 * SIZE_STEP, 5 * SIZE_STEP
    small = _session(free).run(None, {name: rng.random((1, 3, h, w), np.float32)})
    if any(o.shape[2:] != (h // STRIDE, w // STRIDE) for o in small):
        raise FinderModelError(f"the freed graph read a {w}×{h} input into outputs of "
                               f"{[o.shape for o in small]}, not {w // STRIDE}×{h // STRIDE} cells")
    return free, diff


def free_input_size_file(src: str | Path, dst: str | Path | None = None) -> tuple[Path, float]:
    """`free_input_size` on a file, written to `dst` (default: `src`, rewritten in place)."""
    import onnx

    src = Path(src)
    if not src.is_file():
        raise FinderModelError(f"{src}: no such model file")
    free, diff = free_input_size(onnx.load(str(src)))
    out = Path(dst) if dst is not None else src
    tmp = out.with_name(out.name + ".tmp")
    onnx.save(free, str(tmp))
    os.replace(tmp, out)
    return out, diff


def main(argv: list[str]) -> int:
    """`python -m vision.train.free_size MODEL.onnx [OUT.onnx]`."""
    if len(argv) not in (1, 2):
        sys.stderr.write("usage: python -m vision.train.free_size MODEL.onnx [OUT.onnx]\n")
        return 2
    try:
        out, diff = free_input_size_file(*argv)
    except (OSError, FinderModelError) as exc:
        sys.stderr.write(f"{argv[0]}: {exc}\n")
        return 1
    sys.stdout.write(f"{out}: input height and width free; outputs at {INPUT_WIDTH}×{INPUT_HEIGHT} "
                     f"within {diff:.1e} of the fixed graph's\n")
    return 0


if __name__ == "__main__":  # pragma: no cover - a maintenance command
    sys.exit(main(sys.argv[1:]))
