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

from kiln.errors import StackValidationFailed
from kiln.resources.base import Attribute, Properties, Property, SupportStatus
from kiln.resources.scaling_group import ScalingGroup
from kiln.scaling import capacity, cooldown
from kiln.template.constraints import Range


class AutoScalingGroupBase(ScalingGroup):
    """The rules both autoscaling groups share (sizes, bounds, cooldown, adjust)."""

    #: property names in the type's own spelling
    MIN, MAX, DESIRED, COOLDOWN = "min_size", "max_size", "desired_capacity", "cooldown"

    def validate(self) -> None:
        super().validate()
        props = self.properties
        low, high = int(props[self.MIN]), int(props[self.MAX])
        if high < low:
            raise StackValidationFailed("MinSize can not be greater than MaxSize")
        if low < 0:
            raise StackValidationFailed("The size of AutoScalingGroup can not be less than "
                                        "zero")
        desired = props[self.DESIRED]
        if desired is not None and not low <= int(desired) <= high:
            raise StackValidationFailed("DesiredCapacity must be between MinSize and MaxSize")

    def initial_size(self, properties: Properties) -> int:
        desired = properties[self.DESIRED]
        return int(desired) if desired else int(properties[self.MIN])

    def target_size(self, properties: Properties, current: int) -> int:
        desired = properties[self.DESIRED] or current
        return capacity.new_capacity(current, desired, capacity.EXACT_CAPACITY,
                                     minimum=int(properties[self.MIN]),
                                     maximum=int(properties[self.MAX]))

    def scaling_cooldown(self) -> float | None:
        value = self.properties[self.COOLDOWN]
        return None if value is None else float(value)

    def records_cooldown(self) -> bool:
        return True

    async def adjust(self, adjustment: float, adjustment_type: str, *,
                     min_adjustment_step: int | None = None,
                     cooldown_secs: float | None = None) -> int:
        """Resize by a policy's adjustment; returns the new size. Raises
        :class:`cooldown.ScalingRefused` (nothing to do: no event, as in Heat) when the
        group is busy, in cooldown, not COMPLETE, or already at the size asked for."""
        if self.state.status != "COMPLETE":
            raise cooldown.ScalingRefused(self.name, "when status is not COMPLETE")
        await self.refresh()
        current = self.current_size()
        props = self.properties
        size = capacity.new_capacity(current, adjustment, adjustment_type,
                                     minimum=int(props[self.MIN]),
                                     maximum=int(props[self.MAX]),
                                     min_adjustment_step=min_adjustment_step)
        if size == current:
            raise cooldown.ScalingRefused(self.name, "as there is no change in capacity")
        if cooldown_secs is None:
            cooldown_secs = self.scaling_cooldown()
        key = (self.runtime.stack_id, self.name)
        if key in _RESIZING:
            raise cooldown.ScalingRefused(self.name, "due to scaling activity")
        _RESIZING.add(key)  # no await since the test: one admission per group and process
        try:
            await self.check_scaling(cooldown_secs)
            await self.save_progress()
            reason = f"{adjustment_type} : {_number(adjustment)}"
            await self._resize_noting(size, current, adjustment, adjustment_type,
                                      cooldown_secs, reason)
        finally:
            _RESIZING.discard(key)
        return size

    async def _resize_noting(self, size: int, current: int, adjustment: float,
                             adjustment_type: str, cooldown_secs: float | None,
                             reason: str) -> None:
        """Resize, with Heat's autoscaling notifications (start, end or error) written
        as events of the group, where stack events go (event list, stream)."""
        group = self.reference_id()
        note = f"adjustment {adjustment_type} {_number(adjustment)}"
        # and sent as Heat's orchestration.autoscaling.* notifications, Heat's body
        whole = float(adjustment).is_integer()
        body = {"adjustment": int(adjustment) if whole else adjustment,
                "adjustment_type": adjustment_type, "capacity": current, "groupname": group,
                "message": f"Start resizing the group {group}"}
        self.runtime.notify_autoscaling("start", body)
        await self.save_progress(event=(IN_PROGRESS, f"Start resizing the group {group} "
                                        f"from {current} ({note})"))
        try:
            await self.resize_to(size, cooldown_secs=cooldown_secs, reason=reason)
        except Exception as exc:
            self.runtime.notify_autoscaling("error", body | {
                "capacity": self.current_size(), "message": str(exc)})
            await self.save_progress(event=(FAILED, f"{exc} (the group has "
                                            f"{self.current_size()} members)"))
            raise
        self.runtime.notify_autoscaling("end", body | {
            "capacity": size, "message": f"End resizing the group {group}"})
        await self.save_progress(event=(COMPLETE, f"End resizing the group {group} "
                                        f"to {size} ({note})"))

    async def save_progress(self, *, event: tuple[str, str] | None = None) -> None:
        """Persist the group's data and metadata now: another request then sees the
        group busy (``scaling_in_progress``), and its attributes follow its size.
        ``event`` (status, reason) is recorded with it as a ``SIGNAL`` event."""
        await self.runtime.save_resource(self.name, event=event)


#: (stack id, group) of the groups this process is resizing for a policy: a second
#: signal while one runs is ignored, as Heat ignores it (``scaling_in_progress``), even
#: before the first has stored that flag
_RESIZING: set[tuple[str, str]] = set()
IN_PROGRESS, COMPLETE, FAILED = "IN_PROGRESS", "COMPLETE", "FAILED"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


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
