"""Opening a cardtrack ONNX model: one place for the session options and the clear errors.

`open_model` checks that the file exists, that onnxruntime can read it, that its metadata
names the expected model kind (`cardtrack.model`) and that its first input has the expected
shape, and raises the caller's error type with a message naming the path and the command that
re-creates the model. Sessions run sequentially with the given intra-op thread count.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def open_model(
    path: str | Path,
    *,
    kind: str,
    label: str,
    input_shape: Sequence[int],
    error: type[ValueError],
    train_command: str,
    providers: Sequence[str] = ("CPUExecutionProvider",),
    threads: int = 1,
    free_size: bool = False,
) -> tuple[Any, dict[str, str]]:
    """The onnxruntime session of the `kind` model at `path` and its metadata.

    `label` names the model in messages ("finder", "corner"); `input_shape` is the first
    input's shape without the batch dimension; with `free_size`, an input whose height and
    width are named (any size) fits as well as one of `input_shape`'s."""
    import onnxruntime as ort

    path = Path(path)
    if not path.is_file():
        raise error(f"{path}: no {label} model here; train one with `{train_command}` "
                    f"or pass the path of an existing {kind}.onnx")
    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, int(threads))
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(str(path), sess_options=options, providers=list(providers))
    except Exception as exc:  # onnxruntime raises its own exception types for bad files
        first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
        raise error(f"{path}: not a readable ONNX model ({first}); re-create it with `{train_command}`") from None
    meta = dict(session.get_modelmeta().custom_metadata_map)
    inputs = session.get_inputs()
    got = list(inputs[0].shape[1:]) if inputs else None
    fits = got == list(input_shape) or (
        free_size and got is not None and len(got) == len(input_shape) and got[0] == input_shape[0]
        and all(d is None or isinstance(d, str) for d in got[1:]))
    if meta.get("cardtrack.model") != kind or not fits:
        shape = ", ".join(str(n) for n in input_shape)
        raise error(f"{path}: not a cardtrack {label} model (expected an (N, {shape}) input and {kind} "
                    f"metadata); re-create it with `{train_command}`")
    return session, meta
