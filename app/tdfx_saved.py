"""When `import tdfx` may skip saving a module again: the fingerprint of what its file holds.

Saving a module (torch.jit.script, then torch.jit.save) takes most of a warm call's time (0.3 s
for resnet18 here), and a notebook calls draw, trace and verify on the same module in turn. A file
saved from a module is used again while the module's fingerprint is the same: its submodules
(which objects, of which classes, in training or eval mode), their plain attributes (numbers,
strings, keys, hooks and an instance's own forward), each parameter's and buffer's tensor (its
storage, shape and dtype, its version counter, which every in-place change such as an optimizer
step raises, and a checksum of its bytes, which sees a change made through `.data`), and the
example inputs saved with it.

What the fingerprint cannot see is a change outside the module object, such as a global the
forward reads; a new module object is always saved anew. A container it does not read whole (more
than 10,000 items, or nested deeper than 4 containers) could change in place unseen: a module that
holds one has no fingerprint, and is saved at every call.
"""
from __future__ import annotations

import itertools
import zlib
from typing import Any, Optional

_MAX_ITEMS = 10000  # a container longer than this is not read: the module is saved at every call
_MAX_DEPTH = 4  # nor one nested deeper


class _Unseen(Exception):
    """A value the fingerprint does not read whole: an in-place change to it would go unseen."""


def _checksum(t: Any) -> Optional[int]:
    """crc32 of the tensor's bytes (11 ms for resnet18's 45 MB here): a change made through
    `.data` (`p.data.copy_(...)`, as soft target updates do) leaves the version counter as it
    was. None when the bytes cannot be read (a quantized tensor): then the version counter alone."""
    try:
        import torch
        flat = t.detach()
        if flat.device.type != "cpu":
            flat = flat.cpu()
        flat = flat.contiguous().reshape(-1)
        if flat.numel() == 0:
            return 0
        return zlib.crc32(memoryview(flat.view(torch.uint8).numpy()))
    except Exception:  # noqa: BLE001
        return None


def _tensor_key(t: Any) -> tuple:
    return ("tensor", id(t), t.data_ptr(), t._version, tuple(t.shape), str(t.dtype), str(t.device),
            bool(t.requires_grad), _checksum(t))


def _value_key(value: Any, depth: int = 0) -> Any:
    if value is None or isinstance(value, (bool, int, str, bytes)):
        return value
    if isinstance(value, float):
        return ("float", repr(value))  # nan equals itself here
    if hasattr(value, "data_ptr") and hasattr(value, "_version"):
        return _tensor_key(value)
    builtin = isinstance(value, (dict, list, tuple, set, frozenset))
    if (builtin or hasattr(value, "batch_size") and hasattr(value, "items")) and depth >= _MAX_DEPTH:
        raise _Unseen(f"a container nested deeper than {_MAX_DEPTH}")
    if builtin and len(value) > _MAX_ITEMS:
        raise _Unseen(f"a container of more than {_MAX_ITEMS} items")
    if hasattr(value, "batch_size") and hasattr(value, "items"):  # a TensorDict
        return ("tensordict", tuple(value.batch_size),
                tuple((repr(k), _value_key(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, dict):
        return (type(value), tuple((repr(k), _value_key(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return (type(value), tuple(_value_key(v, depth + 1) for v in items))
    return (type(value), id(value))  # a function, a class, any other object: which one it is


def fingerprint(module: Any, example_inputs: Any = None) -> Optional[tuple]:
    """A value equal for two calls when `module`'s saved file would be the same; None when it
    cannot be told (not an nn.Module, a container it does not read whole, or reading it failed):
    then the module is saved each call."""
    try:
        import torch
        if not isinstance(module, torch.nn.Module):
            return None
        parts: list = [_value_key(example_inputs)]
        for name, m in module.named_modules():
            attrs = tuple((k, _value_key(v)) for k, v in vars(m).items()
                          if k not in ("_parameters", "_buffers", "_modules"))
            parts.append((name, id(m), type(m), attrs))
        for name, t in itertools.chain(module.named_parameters(), module.named_buffers()):
            parts.append((name, _tensor_key(t)))
        return tuple(parts)
    except Exception:  # noqa: BLE001 - an unusual module: saved each call, as before
        return None
