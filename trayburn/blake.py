"""blake2b, the one hash trayburn's hot paths use, without OpenSSL: `import hashlib` loads libcrypto (3.6 MB of
memory and 3 ms of every start) for hashes trayburn never needs there. CPython's own `_blake2` is what
`hashlib.blake2b` is anyway."""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # a Python without it: hashlib's
    from hashlib import blake2b

__all__ = ["blake2b"]
