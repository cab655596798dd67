"""Which outputs are re-read from the cloud on every stack show (Heat's uncached
attributes): ``show`` of a plugin that reads its object back, an attribute the plugin
declares live, or every attribute of such a plugin; nothing else. The reads themselves
run against the real cloud in tests/cloud/test_cloud_behaviour.py."""

from __future__ import annotations

from kiln.engine.model.live_outputs import live_resources
from kiln.resources.heat.value import Value
from kiln.resources.openstack.cinder import Volume
from kiln.resources.openstack.neutron_net import Net
from kiln.template.template import load_template

CLASSES = {"vol": Volume, "net": Net, "val": Value}


def _live(outputs: dict[str, object]) -> set[str]:
    template = load_template({"heat_template_version": "2018-08-31",
                              "resources": {n: {"type": c.type_name}
                                            for n, c in CLASSES.items()},
                              "outputs": {k: {"value": v} for k, v in outputs.items()}},
                             files={})
    return live_resources(template.outputs, CLASSES.get)


def test_live_attributes_in_outputs() -> None:
    assert _live({"a": {"get_attr": ["vol", "status"]}}) == {"vol"}
    assert _live({"a": {"list_join": [",", [{"get_attr": ["net", "show", "name"]}]]}}) \
        == {"net"}
    assert _live({"a": {"get_attr": ["vol"]}}) == {"vol"}
    assert _live({"a": {"get_attr": ["vol", "size"]}, "b": {"get_attr": ["net", "name"]},
                  "c": {"get_attr": ["val", "show"]}, "d": {"get_attr": ["net"]}}) == set()
