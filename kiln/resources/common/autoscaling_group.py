"""What OS::Heat::AutoScalingGroup and AWS::AutoScaling::AutoScalingGroup share: the
size rules (``MinSize can not be greater than MaxSize``, ``DesiredCapacity must be
between MinSize and MaxSize``), cooldown, and :meth:`AutoScalingGroupBase.adjust`, which
the scaling policies of both families call. Each type names the properties in its own
spelling (``MIN``, ``MAX``, ``DESIRED``, ``COOLDOWN``).
"""

from __future__ import annotations

from kiln.errors import StackValidationFailed
from kiln.resources.base import Properties
from kiln.resources.common.scaling_group import ScalingGroup
from kiln.scaling import capacity, cooldown


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
            raise StackValidationFailed("The size of AutoScalingGroup can not be less than zero")
        desired = props[self.DESIRED]
        if desired is not None and not low <= int(desired) <= high:
            raise StackValidationFailed("DesiredCapacity must be between MinSize and MaxSize")

    def initial_size(self, properties: Properties) -> int:
        desired = properties[self.DESIRED]
        return int(desired) if desired else int(properties[self.MIN])

    def target_size(self, properties: Properties, current: int) -> int:
        desired = properties[self.DESIRED] or current
        return capacity.new_capacity(
            current,
            desired,
            capacity.EXACT_CAPACITY,
            minimum=int(properties[self.MIN]),
            maximum=int(properties[self.MAX]),
        )

    def scaling_cooldown(self) -> float | None:
        value = self.properties[self.COOLDOWN]
        return None if value is None else float(value)

    def records_cooldown(self) -> bool:
        return True

    async def adjust(
        self,
        adjustment: float,
        adjustment_type: str,
        *,
        min_adjustment_step: int | None = None,
        cooldown_secs: float | None = None,
    ) -> int:
        """Resize by a policy's adjustment; returns the new size. Raises
        :class:`cooldown.ScalingRefused` (nothing to do: no event, as in Heat) when the
        group is busy, in cooldown, not COMPLETE, or already at the size asked for."""
        if self.state.status != "COMPLETE":
            raise cooldown.ScalingRefused(self.name, "when status is not COMPLETE")
        await self.refresh()
        current = self.current_size()
        props = self.properties
        size = capacity.new_capacity(
            current,
            adjustment,
            adjustment_type,
            minimum=int(props[self.MIN]),
            maximum=int(props[self.MAX]),
            min_adjustment_step=min_adjustment_step,
        )
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
            await self._resize_noting(
                size, current, adjustment, adjustment_type, cooldown_secs, reason
            )
        finally:
            _RESIZING.discard(key)
        return size

    async def _resize_noting(
        self,
        size: int,
        current: int,
        adjustment: float,
        adjustment_type: str,
        cooldown_secs: float | None,
        reason: str,
    ) -> None:
        """Resize, with Heat's autoscaling notifications (start, end or error) written
        as events of the group, where stack events go (event list, stream)."""
        group = self.reference_id()
        note = f"adjustment {adjustment_type} {_number(adjustment)}"
        # and sent as Heat's orchestration.autoscaling.* notifications, Heat's body
        whole = float(adjustment).is_integer()
        body = {
            "adjustment": int(adjustment) if whole else adjustment,
            "adjustment_type": adjustment_type,
            "capacity": current,
            "groupname": group,
            "message": f"Start resizing the group {group}",
        }
        self.runtime.notify_autoscaling("start", body)
        await self.save_progress(
            event=(IN_PROGRESS, f"Start resizing the group {group} from {current} ({note})")
        )
        try:
            await self.resize_to(size, cooldown_secs=cooldown_secs, reason=reason)
        except Exception as exc:
            self.runtime.notify_autoscaling(
                "error", body | {"capacity": self.current_size(), "message": str(exc)}
            )
            await self.save_progress(
                event=(FAILED, f"{exc} (the group has {self.current_size()} members)")
            )
            raise
        self.runtime.notify_autoscaling(
            "end", body | {"capacity": size, "message": f"End resizing the group {group}"}
        )
        await self.save_progress(
            event=(COMPLETE, f"End resizing the group {group} to {size} ({note})")
        )

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
