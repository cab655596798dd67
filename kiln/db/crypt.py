"""Encryption of secrets at rest.

Hidden template parameters and resource data a plugin marks ``redact`` are stored as
Fernet tokens (AES-128-CBC + HMAC-SHA256, from ``cryptography``). The Fernet key is
derived with HKDF-SHA256 from ``CONF.auth_encryption_key``, so an operator's existing
key of any length works and the raw option value never touches the data.

A stored secret is the string ``"fernet1:" + token``; the prefix names the method so a
future scheme can tell old values from new ones.

Some documents hold copies of secrets wherever they came from (a stack's outputs, a
snapshot, a server's metadata with its signal URLs and password, a deployment's derived
config): those columns are :class:`SealedJson`, encrypted whatever
``encrypt_parameters_and_properties`` says. Every read also accepts what an older Kiln
wrote: plaintext, and tokens made with Heat's public sample key (Kiln's default before it
generated one, :data:`LEGACY_DEFAULT_KEY`) or with a key named by
:func:`use_previous_keys` (``kiln db update-params``, which re-encrypts them all).
"""

from __future__ import annotations

import base64
import functools
import json
from typing import Any

import sqlalchemy as sa
from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from sqlalchemy.dialects import mysql

from kiln.conf import CONF

PREFIX = "fernet1:"
#: Heat's sample ``auth_encryption_key``, which was Kiln's default: public, so data
#: encrypted with it is as good as plaintext. Still read (rows an older Kiln wrote),
#: refused as a configured key in keystone mode (kiln.encryption_key).
LEGACY_DEFAULT_KEY = "notgood but just long enough i t"
#: keys besides the current one a token may have been made with (``update-params``)
_previous: tuple[str, ...] = ()


class DecryptionFailed(Exception):
    """A stored secret could not be decrypted (wrong auth_encryption_key?)."""


@functools.lru_cache(maxsize=4)
def _fernet(key: str) -> Fernet:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"kiln-secrets-v1",
                   info=b"kiln auth_encryption_key").derive(key.encode())
    return Fernet(base64.urlsafe_b64encode(derived))


def current_key() -> str:
    """The key new secrets are encrypted with: ``auth_encryption_key`` as configured or,
    unset, the one kiln.encryption_key generated (it sets the option); the legacy default
    only in a process that never resolved one (a test embedding the engine)."""
    key = CONF.auth_encryption_key
    return LEGACY_DEFAULT_KEY if key is None else str(key)


def _current() -> Fernet:
    return _fernet(current_key())


def use_previous_keys(keys: tuple[str, ...]) -> None:
    """Also accept tokens made with ``keys`` (an operator's former keys) when reading."""
    global _previous
    _previous = tuple(keys)
    _decrypt.cache_clear()


def is_encrypted(stored: Any) -> bool:
    return isinstance(stored, str) and stored.startswith(PREFIX)


def encrypt(plaintext: str) -> str:
    return PREFIX + _current().encrypt(plaintext.encode()).decode("ascii")


def decrypt(stored: str) -> str:
    if not is_encrypted(stored):
        return stored
    key = current_key()
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
    token = stored[len(PREFIX):].encode("ascii")
    try:
        return _fernet(key).decrypt(token).decode()
    except InvalidToken:
        pass
    for other in (*_previous, LEGACY_DEFAULT_KEY):
        if other != key:
            try:
                return _fernet(other).decrypt(token).decode()
            except InvalidToken:
                continue
    raise DecryptionFailed("cannot decrypt a stored secret with the configured "
                           "auth_encryption_key (was it changed? kiln db update-params "
                           "--previous-encryption-key re-encrypts with a new one)")


def reencrypt(stored: str) -> str:
    """``stored`` (a token made with any accepted key) made with the current key."""
    return encrypt(_decrypt_token(current_key(), stored)) if is_encrypted(stored) else stored


def encrypt_value(value: Any) -> str:
    """Encrypt any JSON-able value (parameter values may be lists, maps, numbers)."""
    return encrypt(json.dumps(value))


def decrypt_value(stored: Any) -> Any:
    if not is_encrypted(stored):
        return stored
    return json.loads(decrypt(stored))


#: Key of the one-entry object that stands for an encrypted JSON document in a JSON column.
SEALED_KEY = "__kiln_encrypted__"

#: :func:`seal_shared`'s memo: documents sealed so far, by their JSON text and by identity
SealMemo = dict[str | int, Any]


def seal(value: Any) -> Any:
    """Resource properties (which often carry hidden parameter values) as stored: one
    encrypted document when ``encrypt_parameters_and_properties`` is set, else as is."""
    return seal_shared(value, {})


def seal_shared(value: Any, sealed: SealMemo) -> Any:
    """:func:`seal`, encrypting each distinct document once per ``sealed`` memo: the
    events of one write batch mostly carry the same properties (a resource's IN_PROGRESS
    and COMPLETE, or a thousand resources declared alike), and each Fernet token costs
    an AES pass, an HMAC and its own few hundred bytes until the batch commits."""
    if value is None or not CONF.encrypt_parameters_and_properties:
        return value
    return _seal(value, sealed)


def _seal(value: Any, sealed: SealMemo) -> Any:
    # the same document object is mostly sealed again and again within one memo (a
    # resource's transitions carry its one properties dict): known by identity, it is
    # not even JSON-encoded again; the object is kept in the entry, so its id cannot
    # be reused by another while the memo lives
    seen = sealed.get(id(value))
    if seen is not None and seen[0] is value:
        return seen[1]
    text = json.dumps(value)
    found = sealed.get(text)
    if found is None:
        token = (_sealed_token(current_key(), text) if len(text) <= CACHED_TOKEN_CHARS
                 else encrypt(text))
        found = sealed[text] = {SEALED_KEY: token}
    sealed[id(value)] = (value, found)
    return found


def seal_always(value: Any) -> Any:
    """``value`` as one encrypted document whatever ``encrypt_parameters_and_properties``
    says (None and an empty list or map stay as they are: nothing to hide, and no token to
    decrypt on every read of a stack without outputs): for the columns that hold copies
    of secrets (:class:`SealedJson`). Even a document that looks sealed is sealed again,
    so a user's metadata shaped like one reads back as the user wrote it."""
    if value is None or (isinstance(value, list | dict) and not value):
        return value
    return _seal(value, {})


def is_sealed(stored: Any) -> bool:
    return isinstance(stored, dict) and len(stored) == 1 and SEALED_KEY in stored


@functools.lru_cache(maxsize=512)
def _sealed_token(key: str, text: str) -> str:
    """The token of a document sealed lately, again: every signal to a wait condition
    or deployment writes an event carrying the same properties, and a fresh token for
    each (an AES pass and an HMAC, 0.1 ms) was a third of the writer's work per signal.
    Equal documents then share a token, which shows only that they are equal (as
    ``sealed`` already does within a batch); the size bounds the plaintexts kept."""
    return PREFIX + _fernet(key).encrypt(text.encode()).decode("ascii")


def unseal(stored: Any) -> Any:
    if is_sealed(stored):
        return decrypt_value(stored[SEALED_KEY])
    return stored


class SealedJson(sa.types.TypeDecorator[Any]):
    """A JSON column whose documents are stored sealed (:func:`seal_always`) and read
    back plain, on every path that binds or reads through the column's type (the ORM,
    Core and kiln.db.sqlite_fast alike). The database sees an ordinary
    JSON column, so no schema change is needed and rows written before hold plaintext,
    which reads as it is."""

    impl = sa.JSON
    cache_ok = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine[Any]:
        if dialect.name in ("mysql", "mariadb"):
            return dialect.type_descriptor(mysql.JSON(none_as_null=True))
        return dialect.type_descriptor(sa.JSON(none_as_null=True))

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        return seal_always(value)

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        return unseal(value)


class SealedText(sa.types.TypeDecorator[str]):
    """:class:`SealedJson` for a text column: stored as an encrypted token, read back
    plain (plaintext rows from before read as they are)."""

    impl = sa.Text
    cache_ok = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine[Any]:
        # the types themselves: PostgreSQL's type_descriptor(Text()) renders VARCHAR
        return mysql.LONGTEXT() if dialect.name in ("mysql", "mariadb") else sa.Text()

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        return None if value is None else encrypt(str(value))

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        return None if value is None else decrypt(value)
