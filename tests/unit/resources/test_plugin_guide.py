"""The example in docs/plugins.md works as written: loaded from a plugin directory and
driven through the two-step contract."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kiln.errors import StackValidationFailed
from kiln.resources.registry import build_registry
from kiln.template.definitions import ResourceDefinition
from tests.unit.resources.fakes import FakeRuntime, roundtrip

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "plugins.md"


async def test_guide_example(tmp_path: Path) -> None:
    code = re.search(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    assert code is not None
    (tmp_path / "timer.py").write_text(code.group(1))
    registry = build_registry([str(tmp_path)], builtins=False, use_entry_points=False)
    assert registry.list_types(with_description=True) == [
        {"resource_type": "Acme::Timer",
         "description": "Waits, then remembers when it finished."}]
    assert registry.schema("Acme::Timer")["properties"]["seconds"]["constraints"] == [
        {"range": {"min": 0}}]
    cls = registry.get("Acme::Timer")
    rt = FakeRuntime()
    timer = cls("t", ResourceDefinition("t", "Acme::Timer", {"seconds": 3}), rt)
    token = roundtrip(await timer.handle_create())
    assert timer.poll_delay(token) == 3
    assert not await timer.check_create_complete(token)
    rt.clock += 3
    assert await timer.check_create_complete(token)
    assert timer.get_attribute("finished_at") == rt.clock
    assert timer.needs_replace({"label": "x"}) and not timer.needs_replace({"seconds": 1})
    with pytest.raises(StackValidationFailed,
                       match=r"resources\.t\.properties\.seconds: -1 is out of range"):
        cls.make_properties("t", {"seconds": -1})
