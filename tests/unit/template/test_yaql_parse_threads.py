"""yaql expressions parsed on several threads at once (a create validating on a worker
thread while the event loop resolves another stack's outputs) each parse as alone.

yaql's parser keeps its lexer's state on the one parser object Kiln shares; without the
parse lock, this test sees "unexpected end of statement" and similar errors for valid
expressions (CI's corpus run hit it once the sandbox no longer forked per evaluation).
"""

from __future__ import annotations

import threading

from kiln.template import yaql_function
from kiln.template.yaql_function import DEFAULT_LIMITS

EXPRESSIONS = ("$.data.a.sum() + int($.data.b) * 3",
               "$.data.keys().select($ + 'x').join(',')",
               "let(x => 1) -> $x + 2 + 3 + 4 + 5")


def test_concurrent_parses_do_not_corrupt_each_other() -> None:
    errors: list[str] = []

    def parse_many(expression: str) -> None:
        for _ in range(400):
            try:  # the uncached parse: the cache would hide a corrupted parser
                yaql_function._parse_now(expression, *DEFAULT_LIMITS)
            except Exception as exc:  # noqa: BLE001  (collected, then asserted empty)
                errors.append(str(exc))

    threads = [threading.Thread(target=parse_many, args=(EXPRESSIONS[i % 3],))
               for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
