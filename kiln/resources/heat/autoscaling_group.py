"""OS::Heat::AutoScalingGroup: a scaling group of any resource type, in HOT.

Members are any type (a provider template, a TestResource, a server); each gets the
``resource`` definition as written. The group starts at ``desired_capacity`` (else
``min_size``); an update resizes it to the new ``desired_capacity`` (else keeps its
size) within ``min_size``..``max_size``; a change of ``resource`` rolls out in batches
as ``rolling_updates`` says (one member at a time by default, as in Heat). Policies
(OS::Heat::ScalingPolicy) resize it through :meth:`adjust`, honouring ``cooldown``.
Heat 27's checks and messages: ``MinSize can not be greater than MaxSize``,
``DesiredCapacity must be between MinSize and MaxSize``.
"""

from __future__ import annotations

from typing import Any

from kiln.resources.base import Attribute, Properties, Property, SupportStatus
from kiln.resources.common.autoscaling_group import AutoScalingGroupBase
from kiln.template.constraints import Range


def _rolling_updates_schema() -> Property:
    return Property(
        "map", "Policy for rolling updates for this scaling group.", update_allowed=True,
        default={"min_in_service": 0, "max_batch_size": 1, "pause_time": 0},
        schema={
            "min_in_service": Property(
                "integer", "The minimum number of resources in service while rolling "
                "updates are being executed.", default=0, constraints=[Range(min=0)]),
            "max_batch_size": Property(
                "integer", "The maximum number of resources to replace at once.",
                default=1, constraints=[Range(min=1)]),
            "pause_time": Property(
                "number", "The number of seconds to wait between batches of updates.",
                default=0, constraints=[Range(min=0)]),
        })


class AutoScalingGroup(AutoScalingGroupBase):
    type_name = "OS::Heat::AutoScalingGroup"
    support_status = SupportStatus(version="2014.1")
    description = ("An autoscaling group that can scale arbitrary resources.\n\n"
                   "An autoscaling group allows the creation of a desired count of similar "
                   "resources, which are defined with the resource property in HOT format.")
    properties_schema = {
        "resource": Property("map", "Resource definition for the resources in the group, "
                             "in HOT format. The value of this property is the definition "
                             "of a resource just as if it had been declared in the "
                             "template itself.", required=True, update_allowed=True),
        "max_size": Property("integer", "Maximum number of resources in the group.",
                             required=True, update_allowed=True, constraints=[Range(min=0)]),
        "min_size": Property("integer", "Minimum number of resources in the group.",
                             required=True, update_allowed=True, constraints=[Range(min=0)]),
        "cooldown": Property("integer", "Cooldown period, in seconds.", update_allowed=True),
        "desired_capacity": Property("integer", "Desired initial number of resources.",
                                     update_allowed=True),
        "rolling_updates": _rolling_updates_schema(),
    }
    attributes_schema = {
        "outputs": Attribute("A map of resource names to the specified attribute of each "
                             "individual resource that is part of the AutoScalingGroup. "
                             "This map specifies output parameters that are available once "
                             "the AutoScalingGroup has been instantiated.", "map",
                             SupportStatus(version="2014.2")),
        "outputs_list": Attribute("A list of the specified attribute of each individual "
                                  "resource that is part of the AutoScalingGroup. This "
                                  "list of attributes is available as an output once the "
                                  "AutoScalingGroup has been instantiated.", "list",
                                  SupportStatus(version="2014.2")),
        "current_size": Attribute("The current size of AutoscalingResourceGroup.",
                                  "integer", SupportStatus(version="2015.1")),
        "refs": Attribute("A list of resource IDs for the resources in the group.", "list",
                          SupportStatus(version="7.0.0")),
        "refs_map": Attribute("A map of resource names to IDs for the resources in the "
                              "group.", "map", SupportStatus(version="7.0.0")),
    }

    def member_snippet(self, properties: Properties) -> dict[str, Any]:
        rdef = dict(properties["resource"] or {})
        return {k: v for k, v in rdef.items() if v is not None}

    def rolling_policy(self, properties: Properties) -> tuple[int, int, float] | None:
        policy = properties["rolling_updates"] or {}
        return (int(policy.get("min_in_service") or 0),
                int(policy.get("max_batch_size") or 1),
                float(policy.get("pause_time") or 0))

    def _definition_changed(self, prop_diff: Any) -> bool:
        return "resource" in prop_diff

    def get_attribute(self, name: str, *path: Any) -> Any:
        from kiln.resources.base import select_path

        if name == "current_size":
            return self.current_size() if self.child_id else None
        if name == "refs":
            refs = self.refs_map()
            return select_path([refs[n] for n in self.member_names() if n in refs], path)
        if name == "refs_map":
            return select_path(self.refs_map(), path)
        if name in ("outputs", "outputs_list"):
            if not path:
                return None
            values = self.member_values(str(path[0]))
            values = {n: select_path(v, path[1:]) for n, v in values.items()}
            return values if name == "outputs" else list(values.values())
        if name.startswith("resource."):
            index, rest = self.as_path(name, tuple(path))
            return self.member_attribute(index, rest)
        if name == "show":
            return None
        return super().get_attribute(name, *path)

    def all_attributes(self) -> dict[str, Any]:
        return {"current_size": self.get_attribute("current_size"),
                "refs": self.get_attribute("refs"), "refs_map": self.get_attribute("refs_map"),
                "outputs": None, "outputs_list": None}
