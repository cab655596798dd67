"""AWS::CloudFormation::WaitConditionHandle and AWS::CloudFormation::WaitCondition.

The AWS handle's reference is a pre-signed URL naming it by ARN; the condition's
``Handle`` property is that URL, which it checks belongs to this very stack.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlparse

from kiln.resources.base import (
    Attribute,
    Property,
    Resource,
    ResourceFailure,
    SupportStatus,
    Token,
)
from kiln.resources.common.wait_condition import CfnWaitHandle, WaitConditionBase
from kiln.template.constraints import Range

NO_DESCRIPTION = "No description available"


def parse_handle_url(url: str) -> tuple[str, str, str, str]:
    """``(tenant, stack_name, stack_id, resource_name)`` from a wait-condition URL."""
    parts = urlparse(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or not parts.path:
        raise ValueError(f'"{url}" is not a valid URL')
    # Heat quotes the ARN in the path; an unquoted one is accepted too
    match = re.search("/arn(%3A|:)openstack(%3A|:)heat(%3A|:)(%3A|:)", parts.path,
                      re.IGNORECASE)
    if match is None:
        raise ValueError(f'"{url}" is not a valid ARN URL')
    arn = unquote(parts.path[match.start() + 1:])
    found = re.fullmatch(r"arn:openstack:heat::([^:]*):stacks/([^/]+)/([^/]+)"
                         r"/resources/(.+)", arn)
    if found is None:
        raise ValueError(f'"{arn}" is not a valid ARN')
    tenant, stack_name, stack_id, resource = found.groups()
    return tenant, stack_name, stack_id, resource


class WaitConditionHandle(CfnWaitHandle):
    type_name = "AWS::CloudFormation::WaitConditionHandle"
    support_status = SupportStatus(version="2014.1")
    description = (
        "AWS WaitConditionHandle resource.\n\n"
        "the main point of this class is to :\n"
        "have no dependencies (so the instance can reference it)\n"
        "generate a unique url (to be returned in the reference)\n"
        "then the cfn-signal will use this url to post to and\n"
        "WaitCondition will poll it to see if has been written to.")


class WaitCondition(WaitConditionBase):
    type_name = "AWS::CloudFormation::WaitCondition"
    support_status = SupportStatus(version="2014.1")
    description = NO_DESCRIPTION
    handle_property = "Handle"
    timeout_property = "Timeout"
    count_property = "Count"
    properties_schema = {
        "Handle": Property(
            "string",
            "A reference to the wait condition handle used to signal this wait condition.",
            required=True),
        "Timeout": Property(
            "integer",
            "The number of seconds to wait for the correct number of signals to arrive.",
            required=True, constraints=[Range(1, 43200)]),
        "Count": Property(
            "integer",
            "The number of success signals that must be received before the stack creation "
            "process continues.",
            default=1, update_allowed=True, constraints=[Range(min=1)]),
    }
    attributes_schema = {
        "Data": Attribute("JSON string containing data associated with wait condition "
                          "signals sent to the handle.", "string"),
    }

    def _check_url(self) -> CfnWaitHandle:
        url = self.properties["Handle"]
        try:
            tenant, stack_name, stack_id, resource = parse_handle_url(url)
        except ValueError as exc:
            raise ResourceFailure(str(exc), exc_type="ValueError") from None
        if tenant != self.runtime.project_id:
            problem = f"tenant {tenant}"
        elif stack_name != self.runtime.stack_name:
            problem = f"stack {stack_name}"
        elif stack_id != self.runtime.stack_id:
            problem = f"stack {stack_id}"
        else:
            handle = self.runtime.resource(resource)
            if isinstance(handle, CfnWaitHandle):
                return handle
            problem = resource
        raise ResourceFailure(f"WaitCondition invalid Handle {problem}", exc_type="ValueError")

    def lookup_handle(self) -> Resource | None:
        try:
            resource = parse_handle_url(self.properties["Handle"])[3]
        except ValueError:
            return None
        return self.runtime.resource(resource)

    async def handle_create(self) -> Token:
        return self._start(self._check_url(), self.properties)
