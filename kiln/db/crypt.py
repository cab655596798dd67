"""Encryption of secrets at rest.

Hidden template parameters and resource data a plugin marks ``redact`` are stored as
Fernet tokens (AES-128-CBC + HMAC-SHA256, from ``cryptography``). The Fernet key is
derived with HKDF-SHA256 from ``CONF.auth_encryption_key``, so an operator's existing
key of any length works and the raw option value never touches the data.

A stored secret is the string ``"fernet1:" + token``; the prefix names the method so a
future key-rotation scheme can tell old values from new ones.
"""

from __future__ import annotations

import base64
import functools
import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from kiln.conf import CONF

PREFIX = "fernet1:"


class DecryptionFailed(Exception):
    """A stored secret could not be decrypted (wrong auth_encryption_key?)."""


@functools.lru_cache(maxsize=4)
def _fernet(key: str) -> Fernet:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"kiln-secrets-v1",
                   info=b"kiln auth_encryption_key").derive(key.encode())
    return Fernet(base64.urlsafe_b64encode(derived))


def _current() -> Fernet:
    return _fernet(str(CONF.auth_encryption_key))


def is_encrypted(stored: Any) -> bool:
    return isinstance(stored, str) and stored.startswith(PREFIX)


def encrypt(plaintext: str) -> str:
    return PREFIX + _current().encrypt(plaintext.encode()).decode("ascii")


def decrypt(stored: str) -> str:
    if not is_encrypted(stored):
        return stored
    key = str(CONF.auth_encryption_key)
    if len(stored) > CACHED_TOKEN_CHARS:
        return _decrypt_token(key, stored)
    return _decrypt(key, stored)


#: Tokens longer than this are decrypted each time rather than remembered: the cache is
#: bounded by count, and a count of big secrets would be a lot of memory.
CACHED_TOKEN_CHARS = 4096


@functools.lru_cache(maxsize=2048)
def _decrypt(key: str, stored: str) -> str:
    """Cached: the engine reloads the same resources' properties over and over, and a
    Fernet token (random IV) is never produced twice, so a hit is always the same value.
    The size holds a 1,000-resource stack's secrets; it was 8,192, and a soak that cycles
    stacks (every token new) grew the server by megabytes for half an hour as the cache
    filled with dead stacks' secrets."""
    return _decrypt_token(key, stored)


def _decrypt_token(key: str, stored: str) -> str:
    try:
        return _fernet(key).decrypt(stored[len(PREFIX):].encode("ascii")).decode()
    except InvalidToken as exc:
        raise DecryptionFailed("cannot decrypt a stored secret with the configured "
                               "auth_encryption_key") from exc


def encrypt_value(value: Any) -> str:
    """Encrypt any JSON-able value (parameter values may be lists, maps, numbers)."""
    return encrypt(json.dumps(value))


def decrypt_value(stored: Any) -> Any:
    if not is_encrypted(stored):
        return stored
    return json.loads(decrypt(stored))


#: Key of the one-entry object that stands for an encrypted JSON document in a JSON column.
SEALED_KEY = "__kiln_encrypted__"


def seal(value: Any) -> Any:
    """Resource properties (which often carry hidden parameter values) as stored: one
    encrypted document when ``encrypt_parameters_and_properties`` is set, else as is."""
    return seal_shared(value, {})


def seal_shared(value: Any, sealed: dict[str, Any]) -> Any:
    """:func:`seal`, encrypting each distinct document once per ``sealed`` memo: the
    events of one write batch mostly carry the same properties (a resource's IN_PROGRESS
    and COMPLETE, or a thousand resources declared alike), and each Fernet token costs
    an AES pass, an HMAC and its own few hundred bytes until the batch commits."""
    if value is None or not CONF.encrypt_parameters_and_properties:
        return value
    text = json.dumps(value)
    found = sealed.get(text)
    if found is None:
        key = str(CONF.auth_encryption_key)
        token = (_sealed_token(key, text) if len(text) <= CACHED_TOKEN_CHARS
                 else encrypt(text))
        found = sealed[text] = {SEALED_KEY: token}
    return found


@functools.lru_cache(maxsize=512)
def _sealed_token(key: str, text: str) -> str:
    """The token of a document sealed lately, again: every signal to a wait condition
    or deployment writes an event carrying the same properties, and a fresh token for
    each (an AES pass and an HMAC, 0.1 ms) was a third of the writer's work per signal.
    Equal documents then share a token, which shows only that they are equal (as
    ``sealed`` already does within a batch); the size bounds the plaintexts kept."""
    return PREFIX + _fernet(key).encrypt(text.encode()).decode("ascii")


def unseal(stored: Any) -> Any:
    if isinstance(stored, dict) and len(stored) == 1 and SEALED_KEY in stored:
        return decrypt_value(stored[SEALED_KEY])
    return stored
