"""A preview whose resource has a property Heat cannot resolve is refused with Heat's own
400 body, words included (heat-tempest-plugin's StackPreviewTest.test_basic_fail).

Heat's API reaches its engine over RPC; the engine's StackValidationFailed is rebuilt on
the API side from its formatted parts, which doubles each separator:
``Property error: : resources.two.properties.value: : The Parameter (missing) was not
provided.`` (checked with Heat 27.0.1's own exception serialised by oslo.messaging, the
way every non-fake transport carries it; a Heat on ``fake://`` shows single separators).
"""

from __future__ import annotations

import httpx

from tests.support.server import HTTP_TIMEOUT, KilnProcess

TEMPLATE = """
heat_template_version: 2015-04-30
parameters:
  incomming:
    type: string
resources:
  one:
    type: OS::Heat::TestResource
    properties:
      value: fred
  two:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: missing}
    depends_on: one
outputs:
  main_out:
    value: {get_attr: [two, output]}
"""


def test_preview_of_a_missing_parameter_answers_heats_words(kiln_server: KilnProcess) -> None:
    with httpx.Client(timeout=HTTP_TIMEOUT) as http:
        answer = http.post(f"{kiln_server.endpoint('demo')}/stacks/preview",
                           headers={"X-Auth-Token": "x"},
                           json={"stack_name": "pv", "template": TEMPLATE,
                                 "disable_rollback": True,
                                 "environment": {"parameters": {"incomming": "abc"}}})
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert body["error"]["type"] == "StackValidationFailed"
    assert body["error"]["message"] == (
        "Property error: : resources.two.properties.value: : The Parameter (missing) was "
        "not provided.")
