"""OS::Heat::RandomString: a random secret generated once, at create."""

from __future__ import annotations

import functools
import os
import string
import struct
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from kiln.errors import StackValidationFailed
from kiln.resources.base import (
    Attribute,
    Properties,
    Property,
    Resource,
    SupportStatus,
    Token,
)
from kiln.template.constraints import AllowedValues, Range

CHARACTER_CLASSES: dict[str, str] = {
    "lettersdigits": string.ascii_letters + string.digits,
    "letters": string.ascii_letters,
    "lowercase": string.ascii_lowercase,
    "uppercase": string.ascii_uppercase,
    "digits": string.digits,
    "hexdigits": string.digits + "ABCDEF",
    "octdigits": string.octdigits,
}


class _Entropy:
    """Bytes from the OS's random source, read in blocks: one system call serves many
    strings (on some kernels each call costs microseconds). Bytes are never reused."""

    BLOCK = 8192

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buf = b""
        self._pos = 0

    def take(self, count: int) -> bytes:
        with self._lock:
            if self._pos + count > len(self._buf):
                self._buf = os.urandom(max(self.BLOCK, count))
                self._pos = 0
            chunk = self._buf[self._pos:self._pos + count]
            self._pos += count
            return chunk


_entropy = _Entropy()


def _draw(pool: str, count: int) -> list[str]:
    """*count* characters drawn uniformly from *pool* (at most 256 distinct)."""
    size = len(pool)
    limit = 256 - 256 % size          # reject bytes that would bias the modulo
    out: list[str] = []
    while len(out) < count:
        need = count - len(out)
        out.extend([pool[b % size] for b in _entropy.take(2 * need + 8) if b < limit][:need])
    return out


def _shuffle(chars: list[str]) -> str:
    """A uniformly random order: sort by independent random 64-bit keys."""
    keys = struct.unpack(f"<{len(chars)}Q", _entropy.take(8 * len(chars)))
    return "".join([chars[i] for i in sorted(range(len(chars)), key=keys.__getitem__)])


@functools.lru_cache(maxsize=256)
def _pool(chars: str) -> str:
    """The distinct characters of *chars*, in a fixed order."""
    return "".join(sorted(set(chars)))


def generate(length: int, pools: Iterable[tuple[str, int]]) -> str:
    """A string of *length* with at least ``min`` characters from each ``(chars, min)``
    pool, the rest drawn from the union of all pools, in random order."""
    picked: list[str] = []
    union: list[str] = []
    for chars, minimum in pools:
        members = _pool(chars)
        union.append(members)
        picked.extend(_draw(members, minimum))
    rest = max(0, length - len(picked))
    if rest:
        picked.extend(_draw(_pool("".join(union)), rest))
    return _shuffle(picked)[:length]


_MIN = Range(1, 512)


class RandomString(Resource):
    type_name = "OS::Heat::RandomString"
    side_effect_free = True
    secret_data = frozenset({"value"})
    validate_reads = ("character_sequences", "character_classes", "length")
    support_status = SupportStatus(version="2014.1")
    description = (
        "A resource which generates a random string.\n"
        "\n"
        "This is useful for configuring passwords and secrets on services. Random\n"
        "string can be generated from specified character sequences, which means\n"
        "that all characters will be randomly chosen from specified sequences, or\n"
        "with some classes, e.g. letterdigits, which means that all character will\n"
        "be randomly chosen from union of ascii letters and digits. Output string\n"
        "will be randomly generated string with specified length (or with length of\n"
        "32, if length property doesn't specified).")
    properties_schema = {
        "length": Property("integer", "Length of the string to generate.", default=32,
                           constraints=[Range(1, 512)]),
        "sequence": Property(
            "string", "Sequence of characters to build the random string from.",
            constraints=[AllowedValues(tuple(CHARACTER_CLASSES))],
            support_status=SupportStatus(
                "HIDDEN", version="5.0.0",
                previous_status=SupportStatus("DEPRECATED", "Use property character_classes.",
                                              "2014.2"))),
        "character_classes": Property(
            "list",
            "A list of character class and their constraints to generate the random "
            "string from.",
            default=[{"class": "lettersdigits", "min": 1}],
            schema=Property("map", schema={
                "class": Property(
                    "string",
                    "A character class and its corresponding min constraint to generate "
                    "the random string from.",
                    default="lettersdigits",
                    constraints=[AllowedValues(tuple(CHARACTER_CLASSES))]),
                "min": Property(
                    "integer",
                    "The minimum number of characters from this character class that will "
                    "be in the generated string.",
                    default=1, constraints=[_MIN]),
            })),
        "character_sequences": Property(
            "list",
            "A list of character sequences and their constraints to generate the random "
            "string from.",
            schema=Property("map", schema={
                "sequence": Property(
                    "string",
                    "A character sequence and its corresponding min constraint to generate "
                    "the random string from.",
                    required=True),
                "min": Property(
                    "integer",
                    "The minimum number of characters from this sequence that will be in "
                    "the generated string.",
                    default=1, constraints=[_MIN]),
            })),
        "salt": Property(
            "string",
            "Value which can be set or changed on stack update to trigger the resource for "
            "replacement with a new random string. The salt value itself is ignored by the "
            "random generator."),
    }
    attributes_schema = {
        "value": Attribute("The random string generated by this resource. This value is "
                           "also available by referencing the resource.", "string"),
    }

    @classmethod
    def make_properties(cls, resource_name: str, resolved: Any) -> Properties:
        """The deprecated ``sequence`` becomes one more character class (min 1)."""
        props = super().make_properties(resource_name, resolved)
        if props["sequence"] is None:
            return props
        data = {k: v for k, v in resolved.items() if k != "sequence"}
        given = resolved.get("character_classes")
        classes = list(given) if isinstance(given, Sequence) else []
        data["character_classes"] = [*classes, {"class": props["sequence"], "min": 1}]
        return super().make_properties(resource_name, data)

    def _pools(self) -> list[tuple[str, int]]:
        sequences = self.properties["character_sequences"] or []
        classes = self.properties["character_classes"] or []
        return ([(s["sequence"], s["min"]) for s in sequences]
                + [(CHARACTER_CLASSES[c["class"]], c["min"]) for c in classes])

    def validate(self) -> None:
        super().validate()
        if sum(m for _, m in self._pools()) > self.properties["length"]:
            raise StackValidationFailed(
                "Length property cannot be smaller than combined character class and "
                "character sequence minimums")

    async def handle_create(self) -> Token:
        self.data["value"] = generate(self.properties["length"], self._pools())
        self.resource_id = self.physical_resource_name()
        return None

    def resolve_attribute(self, name: str) -> Any:
        return self.data.get("value")

    def reference_id(self) -> str | None:
        if self.resource_id is not None:  # external: no value, and Heat's reference is null
            return self.data.get("value")
        return self.name
