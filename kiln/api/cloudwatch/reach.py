"""What a stack's keypair may push metrics for: its own stack tree's alarms (issue 22).

Servers push metrics with cfn-push-stats ``--watch <alarm>``, which adds the dimension
``AlarmName`` naming the alarm (Heat's watch rule) the data is for; Heat fed that rule
whatever the other dimensions. Heat let any stack user push into any watch rule of its
project. Kiln confines a keypair it issued to a stack's resource (a server's, an
``AWS::IAM::AccessKey``): each datum it pushes must carry ``AlarmName`` naming an alarm
of the keypair's stack tree (its root stack and the stacks nested under it, so a
group's member servers can feed their parent's alarm, as the pattern goes), else the
call is AWS's ``AccessDenied`` (403) and nothing is kept. A point so tagged reaches only
alarms that name it: the alarm by name, or one whose dimensions are exactly these. A
project's own keypair (``kiln ec2-credentials create``, a Keystone EC2 credential)
pushes anywhere in its project, as in AWS.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.api.aws import errors
from kiln.api.aws.credentials import Ec2Identity
from kiln.engine.service.interface import CloudWatchAPI

DIMENSION = "AlarmName"


def _alarm_name(item: Any) -> str | None:
    dims = item.get("Dimensions") if isinstance(item, Mapping) else None
    if not isinstance(dims, list):
        return None
    for pair in dims:
        if isinstance(pair, Mapping) and pair.get("Name") == DIMENSION:
            value = pair.get("Value")
            return value if isinstance(value, str) and value else None
    return None


async def check_metric_reach(cloudwatch: CloudWatchAPI, identity: Ec2Identity,
                             params: Mapping[str, Any]) -> None:
    """Refuse a stack keypair's PutMetricData for anything but its stack tree's alarms."""
    if identity.stack_id is None:
        return
    data = params.get("MetricData")
    items = data if isinstance(data, list) else []
    names: list[str] = []
    for i, item in enumerate(items, 1):
        name = _alarm_name(item)
        if name is None:
            raise errors.AccessDenied(
                f"MetricData.member.{i}: a keypair issued to a stack's resource may push "
                f"metrics only for its stack's alarms, named by the dimension {DIMENSION} "
                "(cfn-push-stats --watch <alarm>)")
        names.append(name)
    found = await cloudwatch.stack_tree_alarms(identity.project_id, identity.stack_id, names)
    for i, name in enumerate(names, 1):
        if name not in found:
            shown = name if len(name) <= 255 else name[:255] + "..."
            raise errors.AccessDenied(
                f"MetricData.member.{i}: {DIMENSION} '{shown}' is not an alarm of the stack "
                "this keypair was issued to")
