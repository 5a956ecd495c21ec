"""Framing between the grader and a sandbox child: JSON header + npy blobs, no pickle.

A frame is

    4-byte big-endian length | JSON header (utf-8) | blob* where blob = 4-byte length | .npy bytes

and the header says how many blobs follow ("__blobs__"). In JSON, arrays appear as
{"__ndarray__": i} (an index into the blobs), torch tensors (grader -> child only) as
{"__tensor__": i, "dtype": "float32"}, tuples as {"__tuple__": [...]} and dicts whose keys are
not plain strings as {"__dict__": [[key, value], ...]}.

This file is loaded twice: by the grader as `autograder.sandbox.inside.protocol`, and by the zygote
(a clean interpreter without the kit on sys.path) from its file path under a private name.
So it imports nothing but the standard library and numpy, and numpy only when an array is met:
the parse helper loads it too, sends bytes and text, and starts faster without numpy.

Reading is written for an untrusted sender: every length is capped, the npy header is
parsed and checked against the bytes that follow before any array is made, object and
structured dtypes are refused, and anything malformed raises ProtocolError.
"""

from __future__ import annotations

import io
import json
import re
import socket
import struct
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

MAX_FRAME_BYTES = 64 * 1024 * 1024
# JSON costs far more memory once parsed than arrays do (a float in a list: ~32 bytes).
MAX_HEADER_BYTES = 8 * 1024 * 1024
MAX_BLOBS = 4096
_U32 = struct.Struct(">I")
_NPY_MAGIC = b"\x93NUMPY"
# dtype kinds an npy blob may have: bool, signed/unsigned int, float. No objects, no records.
_BLOB_KINDS = frozenset("biuf")
_MARKERS = ("__ndarray__", "__tensor__", "__tuple__", "__dict__")


class ProtocolError(Exception):
    """The peer sent something that is not a well-formed frame (or too large a one)."""


class PeerClosed(ProtocolError):
    """The peer closed the connection (usually: the process died)."""


class FrameTimeout(Exception):
    """The deadline passed before a whole frame arrived."""


def _numpy():
    import numpy

    return numpy


class TensorArg:
    """Marks an array the child must turn into a torch tensor before the call."""

    __slots__ = ("array", "dtype")

    def __init__(self, array, dtype: str | None = None):
        self.array = _numpy().asarray(array)
        self.dtype = dtype or self.array.dtype.name

    def __repr__(self) -> str:
        return f"TensorArg(shape={self.array.shape}, dtype={self.dtype})"


# ------------------------------------------------------------------ encode / decode

def encode(value, blobs: list) -> object:
    """Plain data -> JSON-able structure; arrays are appended to `blobs` and referenced by index."""
    if value is None or type(value) in (bool, int, float, str):
        return value
    np = sys.modules.get("numpy")      # where numpy was never imported, no value is one of its
    if np is not None and isinstance(value, np.generic):
        if isinstance(value, (np.bool_, np.integer, np.floating)):
            return value.item()
        raise TypeError(f"cannot send a numpy scalar of dtype {value.dtype}")
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, TensorArg):
        blobs.append(_plain_array(value.array))
        return {"__tensor__": len(blobs) - 1, "dtype": str(value.dtype)}
    if np is not None and isinstance(value, np.ndarray):
        blobs.append(_plain_array(value))
        return {"__ndarray__": len(blobs) - 1}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v, blobs) for v in value]}
    if isinstance(value, list):
        return [encode(v, blobs) for v in value]
    if isinstance(value, dict):
        if all(type(k) is str for k in value) and not any(k in _MARKERS for k in value):
            return {k: encode(v, blobs) for k, v in value.items()}
        return {"__dict__": [[encode(k, blobs), encode(v, blobs)] for k, v in value.items()]}
    raise TypeError(f"cannot send a value of type {type(value).__name__}")


def _plain_array(arr: np.ndarray) -> np.ndarray:
    np = _numpy()
    arr = np.ndarray.view(np.asarray(arr), np.ndarray)
    if arr.dtype.kind not in _BLOB_KINDS or arr.dtype.fields is not None:
        raise TypeError(f"cannot send an array of dtype {arr.dtype}")
    return arr


def decode(value, blobs: list, make_tensor=None, _depth: int = 0):
    """The inverse of encode. `make_tensor(array, dtype)` builds tensors (child side only)."""
    if _depth > 200:
        raise ProtocolError("nested too deeply")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [decode(v, blobs, make_tensor, _depth + 1) for v in value]
    if not isinstance(value, dict):
        raise ProtocolError(f"unexpected JSON value of type {type(value).__name__}")
    if "__ndarray__" in value:
        return _blob(value, "__ndarray__", blobs, {"__ndarray__"})
    if "__tensor__" in value:
        arr = _blob(value, "__tensor__", blobs, {"__tensor__", "dtype"})
        dtype = value.get("dtype")
        if not isinstance(dtype, str):
            raise ProtocolError("tensor without a dtype")
        if make_tensor is None:
            raise ProtocolError("a tensor cannot be received here")
        return make_tensor(arr, dtype)
    if "__tuple__" in value:
        if set(value) != {"__tuple__"} or not isinstance(value["__tuple__"], list):
            raise ProtocolError("malformed tuple")
        return tuple(decode(v, blobs, make_tensor, _depth + 1) for v in value["__tuple__"])
    if "__dict__" in value:
        items = value["__dict__"]
        if set(value) != {"__dict__"} or not isinstance(items, list):
            raise ProtocolError("malformed dict")
        out = {}
        for item in items:
            if not isinstance(item, list) or len(item) != 2:
                raise ProtocolError("malformed dict item")
            key = decode(item[0], blobs, make_tensor, _depth + 1)
            if not isinstance(key, (str, int, float, bool, type(None), tuple)):
                raise ProtocolError("unhashable dict key")
            out[key] = decode(item[1], blobs, make_tensor, _depth + 1)
        return out
    return {k: decode(v, blobs, make_tensor, _depth + 1) for k, v in value.items()}


def _blob(value: dict, key: str, blobs: list, keys: set) -> np.ndarray:
    index = value[key]
    if set(value) != keys or type(index) is not int or not 0 <= index < len(blobs):
        raise ProtocolError("malformed array reference")
    return blobs[index]


# ------------------------------------------------------------------ frames

def pack(header: dict, blobs: list | None = None) -> bytes:
    """One frame as bytes. `header` must already be JSON-able (see encode)."""
    blobs = blobs or []
    header = dict(header)
    header["__blobs__"] = len(blobs)
    text = json.dumps(header, allow_nan=True, separators=(",", ":")).encode("utf-8")
    parts = [_U32.pack(len(text)), text]
    for arr in blobs:
        data = npy_bytes(arr)
        parts += [_U32.pack(len(data)), data]
    return b"".join(parts)


def npy_bytes(arr: np.ndarray) -> bytes:
    """What np.save writes for a plain array (kinds b, i, u, f, as encode allows): a version 1.0
    header padded to 64 bytes, then the data in the array's own order. numpy's writer is slow for
    small arrays, and a submission sends a few hundred of them, both ways."""
    fortran = arr.flags.f_contiguous and not arr.flags.c_contiguous
    header = "{'descr': %r, 'fortran_order': %s, 'shape': %r, }" % (arr.dtype.str, fortran, arr.shape)
    header += " " * (-(len(_NPY_MAGIC) + 4 + len(header) + 1) % 64) + "\n"
    return (_NPY_MAGIC + b"\x01\x00" + len(header).to_bytes(2, "little") + header.encode("latin1")
            + arr.tobytes("F" if fortran else "C"))


def message(header: dict, payload: dict | None = None) -> bytes:
    """A frame whose header is `header` plus the encoded values of `payload`."""
    blobs: list = []
    full = dict(header)
    for key, value in (payload or {}).items():
        full[key] = encode(value, blobs)
    return pack(full, blobs)


def send_frame(sock: socket.socket, frame: bytes, deadline: float | None = None) -> None:
    """Sends a whole frame; FrameTimeout if the peer does not take it before the deadline."""
    if deadline is None:
        sock.settimeout(None)
        sock.sendall(frame)
        return
    view = memoryview(frame)
    while view:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise FrameTimeout()
        sock.settimeout(remaining)
        try:
            sent = sock.send(view)
        except socket.timeout:
            raise FrameTimeout() from None
        view = view[sent:]


def _recv_exact(sock: socket.socket, n: int, deadline: float | None) -> bytes:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        if deadline is None:
            sock.settimeout(None)
        else:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise FrameTimeout()
            sock.settimeout(remaining)
        try:
            k = sock.recv_into(view[got:], min(n - got, 1 << 20))
        except socket.timeout:
            raise FrameTimeout() from None
        except (ConnectionResetError, BrokenPipeError) as err:
            raise PeerClosed(str(err)) from None
        if k == 0:
            raise PeerClosed("the connection was closed")
        got += k
    return bytes(buf)


def recv_frame(sock: socket.socket, deadline: float | None = None, max_bytes: int = MAX_FRAME_BYTES,
               max_header: int = MAX_HEADER_BYTES) -> tuple[dict, list]:
    """Reads one frame: (header dict without "__blobs__", list of arrays)."""
    (n,) = _U32.unpack(_recv_exact(sock, 4, deadline))
    if n > min(max_bytes, max_header):
        raise ProtocolError(f"the answer is larger than the limit of {_mb(min(max_bytes, max_header))}")
    try:
        header = json.loads(_recv_exact(sock, n, deadline).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise ProtocolError(f"the frame header is not valid JSON ({type(err).__name__})") from None
    if not isinstance(header, dict):
        raise ProtocolError("the frame header is not a JSON object")
    count = header.pop("__blobs__", 0)
    if type(count) is not int or not 0 <= count <= MAX_BLOBS:
        raise ProtocolError("bad blob count")
    total = 4 + n
    blobs = []
    for _ in range(count):
        (m,) = _U32.unpack(_recv_exact(sock, 4, deadline))
        total += 4 + m
        if total > max_bytes:
            raise ProtocolError(f"the answer is larger than the limit of {_mb(max_bytes)}")
        blobs.append(load_npy(_recv_exact(sock, m, deadline)))
    return header, blobs


def _mb(n: int) -> str:
    return f"{n / 2 ** 20:g} MB"


# The header np.save writes for a plain array, version 1.0: read by this pattern (numpy reads it with
# ast.literal_eval, about three quarters of the time of loading a small array); any other header
# is read by numpy, as before.
_PLAIN_HEADER = re.compile(rb"\{'descr': '([<>|=]?[biuf][1-8])', 'fortran_order': (True|False), "
                           rb"'shape': \((|[0-9]{1,18},|[0-9]{1,18}(?:, [0-9]{1,18})+)\), \} *\n")


def _plain_header(data: bytes) -> tuple[tuple[int, ...], bool, np.dtype, int] | None:
    """(shape, fortran, dtype, offset of the data) of a version 1.0 header as np.save writes it."""
    if data[6:8] != b"\x01\x00" or len(data) < 10:
        return None
    end = 10 + int.from_bytes(data[8:10], "little")
    match = _PLAIN_HEADER.fullmatch(data, 10, end)
    if match is None:
        return None
    shape = tuple(int(n) for n in match.group(3).replace(b",", b" ").split())
    return shape, match.group(2) == b"True", _numpy().dtype(match.group(1).decode("ascii")), end


def load_npy(data: bytes) -> np.ndarray:
    """An .npy blob -> a fresh base-class ndarray, after checking its header against its size."""
    if not data.startswith(_NPY_MAGIC):
        raise ProtocolError("a blob is not in .npy format")
    plain = _plain_header(data)
    if plain is not None:
        shape, fortran, dtype, offset = plain
        return _array(data, shape, fortran, dtype, offset)
    np = _numpy()
    fp = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(fp)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp)
        else:
            raise ProtocolError(f"unsupported .npy version {version}")
    except ProtocolError:
        raise
    except Exception as err:  # noqa: BLE001 - a malformed header, whatever numpy says about it
        raise ProtocolError(f"a blob has a malformed .npy header ({type(err).__name__})") from None
    return _array(data, shape, fortran, dtype, fp.tell())


def _array(data: bytes, shape, fortran: bool, dtype: np.dtype, offset: int) -> np.ndarray:
    if dtype.kind not in _BLOB_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise ProtocolError(f"a blob has dtype {dtype}, which is not allowed")
    if len(shape) > 32 or any(type(s) is not int or s < 0 for s in shape):
        raise ProtocolError("a blob has a malformed shape")
    count = 1
    for s in shape:
        count *= s
    if count * dtype.itemsize != len(data) - offset:
        raise ProtocolError("a blob's size does not match its header")
    np = _numpy()
    flat = np.frombuffer(data, dtype=dtype, count=count, offset=offset)
    arr = flat.reshape(shape, order="F" if fortran else "C")
    return np.array(arr, dtype=dtype.newbyteorder("="), copy=True, order="C")
