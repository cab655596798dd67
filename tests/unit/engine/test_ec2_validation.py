"""The AWS::EC2 types' own template checks, as Heat 27's plugins make them: refused at
create with a 400 before anything is stored or any cloud is asked (the types' life in a
cloud is tests/cloud/test_ec2.py)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.errors import KilnError
from tests.unit.engine.support import hot

EIP = "172.24.4.10"
CATALOG = frozenset({"compute", "network", "volume", "block-storage", "image"})


@pytest.mark.parametrize(("rtype", "props", "message"), [
    ("AWS::EC2::EIPAssociation", {"EIP": EIP, "AllocationId": "a", "InstanceId": "i"},
     "Either 'EIP' or 'AllocationId' must be provided."),
    ("AWS::EC2::EIPAssociation", {"InstanceId": "i"},
     "Either 'EIP' or 'AllocationId' must be provided."),
    ("AWS::EC2::EIPAssociation", {"EIP": EIP, "NetworkInterfaceId": "n"},
     "Must specify 'InstanceId' if you specify 'EIP'."),
    ("AWS::EC2::EIPAssociation", {"AllocationId": "a"},
     "At least one of the following properties must be specified: InstanceId, "
     "NetworkInterfaceId."),
    ("AWS::EC2::Instance", {"ImageId": "i", "InstanceType": "t", "SecurityGroups": ["g"],
                            "NetworkInterfaces": ["n"]},
     "Cannot define the following properties at the same time: "
     "SecurityGroups/SecurityGroupIds, NetworkInterfaces."),
    ("AWS::EC2::Instance", {"ImageId": "i", "InstanceType": "t",
                            "BlockDeviceMappings": [{"DeviceName": "vdb"}]},
     "Ebs is missing, this is required when specifying BlockDeviceMappings."),
    ("AWS::EC2::Instance", {"ImageId": "i", "InstanceType": "t",
                            "BlockDeviceMappings": [{"DeviceName": "vdb",
                                                     "Ebs": {"VolumeSize": "1"}}]},
     "SnapshotId is missing, this is required when specifying BlockDeviceMappings."),
    ("AWS::EC2::VolumeAttachment", {"InstanceId": "i", "VolumeId": "v",
                                    "Device": "/dev/sda"},
     'Property error: resources.r.properties.Device: "/dev/sda" does not match pattern '
     '"/dev/vd[b-z]"'),
    ("AWS::EC2::VPC", {"InstanceTenancy": "dedicated"},
     "Property error: resources.r.properties: Property InstanceTenancy not implemented "
     "yet"),
])
async def test_refused_at_create(service: EngineService, ctx: RequestContext, rtype: str,
                                 props: dict[str, Any], message: str) -> None:
    # the services are in the caller's catalog: a missing one is reported first, as Heat does
    ctx = dataclasses.replace(ctx, service_types=CATALOG)
    with pytest.raises(KilnError) as info:
        await service.create_stack(ctx, "ec2", hot({"r": {"type": rtype,
                                                          "properties": props}}),
                                   {}, {}, {})
    assert info.value.http_status == 400
    assert message in info.value.message
    assert await service.list_stacks(ctx) == []
